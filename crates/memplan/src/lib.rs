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
//! - [`geometry`]: alignment and fitting, event sweeps (max load, load
//!   profile, time groups, sections), indexes of placed buffers, lifetimes
//!   with gaps ([`geometry::gaps`]: MiniMalloc's `gaps` column, pieces);
//! - [`solver`]: the common solver interface (deadlines, work budgets,
//!   solutions, errors) and zero-size buffers set aside before solving;
//! - [`solvers`]: [`greedy`](solvers::greedy) (sort + first-fit / best-fit
//!   / skyline), [`search`](solvers::search) (MiniMalloc),
//!   [`tela`](solvers::tela) (TelaMalloc), [`boxing`](solvers::boxing)
//!   (idealloc) and [`auto`](solvers::auto), the default portfolio
//!   ([`plan`](fn@plan)); and [`anytime`](solvers::anytime), what each of
//!   them does when the clock or a cancel flag cuts it;
//! - [`hints`]: preferred offsets (MiniMalloc's `hint` column): which
//!   are kept, compatible choices and a bound; [`stable`]: plans that keep
//!   as many of them as possible at the best makespan;
//! - [`pools`]: several memories with capacities (banks), buffers pinned
//!   or shared out among them by a strategy above the solvers;
//! - [`generate`]: synthetic instance generators; [`transform`]:
//!   answer-preserving copies (time reversal, shuffles...);
//! - [`request`]: one request and one report, what every interface (CLI,
//!   Python, C) asks of a solve and gets back, with every default;
//!   [`named`]: the registry of names users choose values by.
//!
//! Imports go one way, from each layer to those before it: [`buffer`],
//! [`quote`], [`dispose`] and [`stop`] (plain data, text helpers, freeing
//! large values off a stop's path, the stop token) → [`named`] (the registry of names) → [`geometry`] →
//! [`problem`] → [`plan`](mod@plan) → [`hints`] → [`solver`] →
//! [`solvers`] → [`pools`], [`stable`] → [`generate`], [`transform`] →
//! [`request`]; no module imports one after
//! it, and there is no cycle (checked by `tests/layers.rs`).
//!
//! The library never prints; the `memplan` binary does.

pub mod buffer;
pub mod dispose;
pub mod generate;
pub mod geometry;
pub mod hints;
pub mod named;
pub mod plan;
pub mod pools;
pub mod problem;
pub mod quote;
pub mod request;
pub mod solver;
pub mod solvers;
pub mod stable;
pub mod stop;
#[cfg(test)]
mod testutil;
pub mod transform;

pub use buffer::BufferIdx;
pub use geometry::gaps::{Gap, Gaps};
pub use plan::{validate, Plan, PlanError, Stats};
pub use problem::{Buffer, InputError, Lifetimes, Problem, ProblemError};
pub use solver::{NotFoundReason, Progress, Solution, SolveError, SolveOptions, Solver, Stopped};
pub use solvers::auto::plan;
