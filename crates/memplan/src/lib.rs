//! memplan: static memory planning.
//!
//! Every buffer has a size and a half-open lifetime `[start, end)`; a plan gives
//! each buffer an offset so that buffers alive at the same time never share an
//! address. This is dynamic storage allocation (DSA).
//!
//! The crate is organised by concept:
//! - [`problem`]: buffers, lifetimes, the problem and its CSV reader;
//! - [`plan`]: offsets, the independent validator, statistics, plan CSV I/O;
//! - [`sweep`]: event traversal (max load, load profile, contention);
//! - [`occupancy`], [`time_tree`]: indexes of placed buffers for the fitting step;
//! - [`solver`]: the common solver interface;
//! - [`greedy`]: sort + first-fit / best-fit / skyline;
//! - [`skyline`]: the TelaMalloc §3.1 baseline (rows bottom-up on a skyline);
//! - [`search`]: the MiniMalloc exact search;
//! - [`boxing`]: the idealloc boxing algorithm;
//! - [`auto`]: the default portfolio ([`plan`]);
//! - [`tela`]: heuristic-guided search with propagation and smart
//!   backtracking (TelaMalloc);
//! - [`generate`]: synthetic instance generators.
//!
//! The library never prints; the `memplan` binary does.

pub mod auto;
pub mod boxing;
pub mod generate;
pub mod greedy;
pub mod index;
pub mod occupancy;
pub mod plan;
pub mod problem;
pub mod quote;
pub mod search;
pub mod skyline;
pub mod solver;
pub mod sweep;
pub mod tela;
#[cfg(test)]
mod testutil;
pub mod time_tree;

pub use auto::plan;
pub use index::BufferIdx;
pub use plan::{validate, Plan, PlanError, Stats};
pub use problem::{Buffer, InputError, Lifetimes, Problem, ProblemError};
pub use solver::{NotFoundReason, Progress, Solution, SolveError, SolveOptions, Solver, Stopped};
