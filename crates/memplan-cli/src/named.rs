//! The library's named values ([`memplan::named::Named`]: solvers, orders,
//! fits, preorders, lifetimes, pool strategies, kinds) as flag values,
//! under the library's own names and help lines.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use memplan::named::Named;

/// The clap parser of a [`Named`] value.
pub fn named<T: Named>() -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(T::ALL.iter().map(|&v| {
        let value = PossibleValue::new(v.name());
        match v.help() {
            Some(help) => value.help(help),
            None => value,
        }
    }))
    .try_map(|name: String| T::parse(&name).map_err(|e| e.to_string()))
}

#[cfg(test)]
mod tests {
    use memplan::generate::Kind;
    use memplan::pools::Strategy;
    use memplan::problem::Lifetimes;
    use memplan::solvers::greedy::{Fit, Order};
    use memplan::solvers::search::Preorder;
    use memplan::solvers::SolverKind;

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
        round_trips::<SolverKind>();
        round_trips::<Order>();
        round_trips::<Fit>();
        round_trips::<Preorder>();
        round_trips::<Kind>();
        round_trips::<Strategy>();
        round_trips::<Lifetimes>();
    }
}
