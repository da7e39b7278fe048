//! The solvers, one module each, all behind [`crate::solver::Solver`]:
//! - [`greedy`]: sort + first-fit / best-fit / skyline (TelaMalloc §3.1),
//!   and the fallback that completes a plan cut short by the clock;
//! - [`search`]: the MiniMalloc exact search;
//! - [`tela`]: heuristic-guided search with propagation and smart
//!   backtracking (TelaMalloc);
//! - [`boxing`]: the idealloc boxing algorithm;
//! - [`auto`]: the default portfolio of the others.
//!
//! Layering: `greedy` imports no other solver; `search`, `tela` and
//! `boxing` may use `greedy` (its variants give their first upper bound);
//! `auto` uses them all.

pub mod auto;
pub mod boxing;
pub mod greedy;
pub mod search;
pub mod tela;
