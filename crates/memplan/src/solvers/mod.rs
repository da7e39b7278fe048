//! The solvers, one module each, all behind [`crate::solver::Solver`]:
//! - [`greedy`]: sort + first-fit / best-fit / skyline (TelaMalloc §3.1);
//! - [`search`]: the MiniMalloc exact search;
//! - [`tela`]: heuristic-guided search with propagation and smart
//!   backtracking (TelaMalloc);
//! - [`boxing`]: the idealloc boxing algorithm;
//! - [`auto`]: the default portfolio of the others;
//!
//! and [`anytime`], not a solver: what every solver does when the clock or
//! a cancel flag cuts it (the cheap plans that need no index, a greedy
//! placement completed above what it placed, the start of the exact
//! solvers at scale, the floor a cut result never goes below).
//!
//! Layering: `greedy` imports no other solver; `anytime` uses `greedy`'s
//! placer; `search`, `tela` and `boxing` use `greedy` (its variants give
//! their first upper bound) and `anytime`; `auto` uses them all.

pub mod anytime;
pub mod auto;
pub mod boxing;
pub mod greedy;
pub mod search;
pub mod tela;

use greedy::Greedy;

use crate::solver::Solver;

/// The solvers a request chooses by name, each with its own options
/// (`crate::request::Request`); [`by_name`] also takes greedy variants.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SolverKind {
    /// The portfolio ([`auto`]), the default.
    #[default]
    Auto,
    /// Sort + fit ([`greedy`]).
    Greedy,
    /// MiniMalloc's exact search ([`search`]).
    Search,
    /// idealloc's boxing ([`boxing`]).
    Boxing,
    /// TelaMalloc ([`tela`]).
    Tela,
}

impl crate::named::Named for SolverKind {
    const WHAT: &'static str = "solver";
    const ALL: &'static [Self] = &[
        SolverKind::Auto,
        SolverKind::Greedy,
        SolverKind::Search,
        SolverKind::Boxing,
        SolverKind::Tela,
    ];
    fn name(self) -> &'static str {
        match self {
            SolverKind::Auto => "auto",
            SolverKind::Greedy => "greedy",
            SolverKind::Search => "search",
            SolverKind::Boxing => "boxing",
            SolverKind::Tela => "tela",
        }
    }
    fn help(self) -> Option<&'static str> {
        Some(match self {
            SolverKind::Auto => "Portfolio: every greedy variant, then search, boxing (and tela with a capacity) within the effort (default 1)",
            SolverKind::Greedy => "Sort + first-fit / best-fit / skyline",
            SolverKind::Search => "MiniMalloc exact search: decides the capacity, or minimises it",
            SolverKind::Boxing => "idealloc boxing: randomized iterations, low fragmentation at scale",
            SolverKind::Tela => "TelaMalloc: heuristic-guided search with propagation and smart backtracking",
        })
    }
}

/// The names every interface (CLI `--solvers`, Python, C) accepts for a
/// solver with its default options: `auto`, `greedy` (size/first-fit),
/// `search`, `boxing`, `tela`, and every greedy variant by its full name
/// (`greedy/ORDER/FIT`, see [`Greedy::all`]).
pub fn names() -> Vec<String> {
    let mut names: Vec<String> = ["auto", "greedy", "search", "boxing", "tela"]
        .map(String::from)
        .into();
    names.extend(Greedy::all().map(|g| g.name()));
    names
}

/// Every distinct solver with its default options: each greedy variant,
/// then search, boxing, tela and auto (what tests run "every solver" on).
pub fn every() -> Vec<Box<dyn Solver>> {
    let mut all: Vec<Box<dyn Solver>> = Greedy::all()
        .map(|g| Box::new(g) as Box<dyn Solver>)
        .collect();
    all.push(Box::new(search::Search::default()));
    all.push(Box::new(boxing::Boxing::default()));
    all.push(Box::new(tela::Tela::default()));
    all.push(Box::new(auto::Auto::default()));
    all
}

/// The solver called `name` (one of [`names`]) with its default options.
pub fn by_name(name: &str) -> Option<Box<dyn Solver>> {
    Some(match name {
        "auto" => Box::new(auto::Auto::default()),
        "greedy" => Box::new(Greedy::default()),
        "search" => Box::new(search::Search::default()),
        "boxing" => Box::new(boxing::Boxing::default()),
        "tela" => Box::new(tela::Tela::default()),
        _ => Box::new(Greedy::all().find(|g| g.name() == name)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name gives a solver, and it reports that name (the greedy
    /// default reports its full variant name).
    #[test]
    fn every_name_is_a_solver() {
        for name in names() {
            let solver = by_name(&name).unwrap_or_else(|| panic!("{name}"));
            if name == "greedy" {
                assert_eq!(solver.name(), Greedy::default().name());
            } else {
                assert_eq!(solver.name(), name);
            }
        }
        assert!(by_name("greedy/size").is_none());
        assert!(by_name("").is_none());
    }
}
