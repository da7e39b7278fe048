//! The registry of names: every enum a user chooses by name (solvers,
//! greedy orders and fits, search preorders, lifetime conventions, pool
//! strategies, generator kinds) is offered under one name, parsed in one
//! place, by every interface (CLI flags, Python keywords, C strings).

use std::fmt;

/// A value chosen by name.
pub trait Named: Copy + Send + Sync + 'static {
    /// What the value is, for messages (`"order"`, `"solver"`...).
    const WHAT: &'static str;
    /// Every value, in the order help texts list them.
    const ALL: &'static [Self];
    /// The value's name: lowercase words joined by `-`.
    fn name(self) -> &'static str;
    /// One line of help for the value, if its name does not say it all.
    fn help(self) -> Option<&'static str> {
        None
    }
    /// The value called `name`; the error lists the known names.
    fn parse(name: &str) -> Result<Self, UnknownName> {
        Self::ALL
            .iter()
            .copied()
            .find(|v| v.name() == name)
            .ok_or_else(|| UnknownName {
                what: Self::WHAT,
                given: name.to_string(),
                known: Self::ALL.iter().map(|v| v.name()).collect(),
            })
    }
}

/// A name that is none of the known ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownName {
    /// What was named ([`Named::WHAT`]).
    pub what: &'static str,
    /// The name given.
    pub given: String,
    /// Every known name, in help order.
    pub known: Vec<&'static str>,
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<String> = self.known.iter().map(|n| format!("`{n}`")).collect();
        write!(
            f,
            "unknown {} `{}` (expected one of {})",
            self.what,
            crate::quote::quoted(&self.given),
            known.join(", ")
        )
    }
}

impl std::error::Error for UnknownName {}
