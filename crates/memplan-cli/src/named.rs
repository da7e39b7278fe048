//! Library enums as flag values, without mirror enums: each value is
//! offered under the library's own name (`Order::name`, `Fit::name`...),
//! with one line of help where the name does not say it all.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use memplan::generate::Kind;
use memplan::pools::Strategy;
use memplan::problem::Lifetimes;
use memplan::solvers::greedy::{Fit, Order};
use memplan::solvers::search::Preorder;

/// A library enum offered as a flag value.
pub trait Named: Copy + Send + Sync + 'static {
    /// Every value, in the order `--help` lists them.
    const ALL: &'static [Self];
    /// The value's name on the command line.
    fn name(self) -> &'static str;
    /// One line of help for the value, if its name needs one.
    fn help(self) -> Option<&'static str> {
        None
    }
}

/// The clap parser of a [`Named`] value.
pub fn named<T: Named>() -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(T::ALL.iter().map(|&v| {
        let value = PossibleValue::new(v.name());
        match v.help() {
            Some(help) => value.help(help),
            None => value,
        }
    }))
    .try_map(|name: String| {
        T::ALL
            .iter()
            .copied()
            .find(|v| v.name() == name)
            .ok_or_else(|| format!("unknown value `{name}`"))
    })
}

impl Named for Order {
    const ALL: &'static [Self] = &Order::ALL;
    fn name(self) -> &'static str {
        Order::name(self)
    }
}

impl Named for Fit {
    const ALL: &'static [Self] = &Fit::ALL;
    fn name(self) -> &'static str {
        Fit::name(self)
    }
    fn help(self) -> Option<&'static str> {
        (self == Fit::Skyline).then_some(
            "TelaMalloc §3.1: rows bottom-up on the skyline (with --order contention: its baseline)",
        )
    }
}

impl Named for Preorder {
    const ALL: &'static [Self] = &Preorder::ALL;
    fn name(self) -> &'static str {
        Preorder::name(self)
    }
}

impl Named for Kind {
    const ALL: &'static [Self] = &Kind::ALL;
    fn name(self) -> &'static str {
        Kind::name(self)
    }
    fn help(self) -> Option<&'static str> {
        (self == Kind::Challenging)
            .then_some("MiniMalloc's challenging suite's character; solve with --capacity 1048576")
    }
}

impl Named for Strategy {
    const ALL: &'static [Self] = &Strategy::ALL;
    fn name(self) -> &'static str {
        Strategy::name(self)
    }
    fn help(self) -> Option<&'static str> {
        Some(match self {
            Strategy::FastestFirst => {
                "Baseline: each buffer (largest first) in the first pool where its first-fit offset fits (ExecuTorch's banked planning)"
            }
            Strategy::Guided => {
                "Pool by pool, the buffers that keep the most bytes × time in it, chosen with the solvers (never worse than fastest-first)"
            }
        })
    }
}

impl Named for Lifetimes {
    const ALL: &'static [Self] = &[
        Lifetimes::HalfOpen,
        Lifetimes::Inclusive,
        Lifetimes::Exclusive,
    ];
    fn name(self) -> &'static str {
        Lifetimes::name(self)
    }
    fn help(self) -> Option<&'static str> {
        Some(match self {
            Lifetimes::HalfOpen => "[lower, upper): MiniMalloc",
            Lifetimes::Inclusive => "[lower, upper]: XLA, the first-fit note",
            Lifetimes::Exclusive => "(lower, upper): idealloc",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value of every named enum parses back from its name, and the
    /// names of one enum are distinct.
    fn round_trips<T: Named + PartialEq + std::fmt::Debug>() {
        let cmd = clap::Command::new("t");
        let parser = named::<T>();
        for &v in T::ALL {
            let got = parser.parse_ref(&cmd, None, std::ffi::OsStr::new(v.name()));
            assert_eq!(got.ok(), Some(v), "{}", v.name());
        }
        assert!(parser
            .parse_ref(&cmd, None, std::ffi::OsStr::new("nope"))
            .is_err());
        let mut names: Vec<&str> = T::ALL.iter().map(|v| v.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), T::ALL.len());
    }

    #[test]
    fn every_named_value_round_trips() {
        round_trips::<Order>();
        round_trips::<Fit>();
        round_trips::<Preorder>();
        round_trips::<Kind>();
        round_trips::<Strategy>();
        round_trips::<Lifetimes>();
    }
}
