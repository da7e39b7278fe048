//! memplan: static memory planning.
//!
//! Every buffer has a size and a half-open lifetime `[start, end)`; a plan gives
//! each buffer an offset so that buffers alive at the same time never share an
//! address. This is dynamic storage allocation (DSA).
//!
//! ```
//! use memplan::{Buffer, Problem, SolveOptions};
//!
//! // Three buffers: `a` and `b` are alive together, `c` after `a`.
//! let problem = Problem::new(
//!     vec![
//!         Buffer::new("a", 0, 2, 64),
//!         Buffer::new("b", 1, 4, 32),
//!         Buffer::new("c", 2, 4, 64),
//!     ],
//!     None, // no capacity: minimise the makespan
//! )?;
//! let solution = memplan::plan(&problem, &SolveOptions::default())?;
//! memplan::validate(&problem, &solution.plan)?;
//! assert_eq!(solution.makespan, 96); // the max load: proven optimal
//! assert!(solution.optimal);
//! let offsets = solution.plan.offsets(); // in the problem's buffer order
//! assert!(offsets[0] + 64 <= offsets[1] || offsets[1] + 32 <= offsets[0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The crate is organised by concept:
//! - [`problem`]: buffers, lifetimes, the problem and its CSV reader;
//! - [`plan`](mod@plan): offsets, the independent validator, statistics, plan CSV I/O;
//! - [`sweep`]: event traversal (max load, load profile, contention);
//! - [`occupancy`], [`time_tree`]: indexes of placed buffers for the fitting step;
//! - [`solver`]: the common solver interface;
//! - [`greedy`]: sort + first-fit / best-fit / skyline;
//! - [`skyline`]: the TelaMalloc §3.1 baseline (rows bottom-up on a skyline);
//! - [`search`]: the MiniMalloc exact search;
//! - [`boxing`]: the idealloc boxing algorithm;
//! - [`auto`]: the default portfolio ([`plan`](fn@plan));
//! - [`tela`]: heuristic-guided search with propagation and smart
//!   backtracking (TelaMalloc);
//! - [`generate`]: synthetic instance generators;
//! - [`zero_size`]: empty buffers, set aside before solving;
//! - [`pools`]: several memories with capacities (banks), buffers pinned
//!   or shared out among them by a strategy above the solvers;
//! - [`transform`]: answer-preserving copies (time reversal, shuffles...).
//!
//! The library never prints; the `memplan` binary does.

pub mod auto;
pub mod boxing;
pub mod fallback;
pub mod generate;
pub mod greedy;
pub mod index;
pub mod occupancy;
pub mod plan;
pub mod pools;
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
pub mod transform;
pub mod zero_size;

pub use auto::plan;
pub use index::BufferIdx;
pub use plan::{validate, Plan, PlanError, Stats};
pub use problem::{Buffer, InputError, Lifetimes, Problem, ProblemError};
pub use solver::{NotFoundReason, Progress, Solution, SolveError, SolveOptions, Solver, Stopped};
