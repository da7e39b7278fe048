//! Shared geometry of time × address, used by the problem's checks, the
//! validator and every solver (never inside one solver):
//! - [`csr`]: compressed sparse rows, the flat form of many short lists;
//! - [`fit`]: alignment and first-fit / best-fit among placed ranges;
//!   [`bucket_fit`]: first-fit among unsorted ranges, without sorting;
//! - [`overlap`]: whether placed buffers collide (the validator's sweep);
//! - [`sweep`]: event traversal (max load, load profile, time groups,
//!   sections, contention);
//! - [`groups`]: split into independent time groups, solve each, scatter;
//! - [`occupancy`], [`time_tree`]: indexes of placed buffers for the
//!   fitting step; [`marks`]: which positions are placed, a bit each;
//! - [`sort`]: a parallel sort that a deadline can cut short;
//! - [`skyline`]: the flat runs of a bottom-up fill's skyline and their
//!   windows, where fills look for holes;
//! - [`gaps`]: lifetimes with gaps (MiniMalloc's `gaps` column): the
//!   side table, pieces, what pieces forbid, the gapped max load.

pub mod bucket_fit;
pub mod csr;
pub mod fit;
pub mod gaps;
pub mod groups;
pub mod marks;
pub mod occupancy;
pub mod overlap;
pub mod skyline;
pub mod sort;
pub mod sweep;
pub mod time_tree;
