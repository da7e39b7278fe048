//! The independent validator: an event sweep with an ordered set of live
//! address ranges, O(n log n).

use rayon::prelude::*;

use super::Plan;
use crate::buffer::{Buffer, BufferIdx};
use crate::geometry::overlap::first_overlap;
use crate::problem::Problem;
use crate::quote::quoted;

/// Why a plan is not valid for a problem.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("plan has {got} offsets for {expected} buffers")]
    WrongLength { expected: usize, got: usize },
    #[error("buffer `{}`: offset {offset} + size {size} overflows 64 bits", quoted(.id))]
    AddressOverflow { id: String, offset: u64, size: u64 },
    #[error("buffer `{}`: offset {offset} is not a multiple of alignment {alignment}", quoted(.id))]
    Misaligned {
        id: String,
        offset: u64,
        alignment: u64,
    },
    #[error("buffer `{}` is fixed at offset {fixed} but placed at {offset}", quoted(.id))]
    FixedMoved { id: String, fixed: u64, offset: u64 },
    #[error("buffer `{}` ends at {end}, past the capacity {capacity}", quoted(.id))]
    ExceedsCapacity { id: String, end: u64, capacity: u64 },
    #[error(
        "buffers `{}` and `{}` are alive at the same time and share addresses",
        quoted(.first_id),
        quoted(.second_id)
    )]
    Overlap {
        first: BufferIdx,
        second: BufferIdx,
        first_id: String,
        second_id: String,
    },
}

/// Checks that `plan` is a valid placement of `problem`: one offset per
/// buffer, alignments and fixed offsets kept, everything within the capacity
/// (if any), and no two buffers sharing an address at the same instant
/// (with gaps: no two [pieces](crate::geometry::gaps::pieces) of different buffers).
pub fn validate(problem: &Problem, plan: &Plan) -> Result<(), PlanError> {
    let buffers = problem.buffers();
    if plan.offsets().len() != buffers.len() {
        return Err(PlanError::WrongLength {
            expected: buffers.len(),
            got: plan.offsets().len(),
        });
    }
    // In parallel, the first error in index order (as one pass would).
    let error = buffers
        .par_iter()
        .zip(plan.offsets())
        .find_map_first(|(b, &offset)| check_one(b, offset, problem.capacity).err());
    if let Some(error) = error {
        return Err(error);
    }
    let placed = plan
        .offsets()
        .iter()
        .enumerate()
        .map(|(i, &o)| (BufferIdx::new(i), o));
    match first_overlap(buffers, problem.gaps(), placed) {
        None => Ok(()),
        Some((a, b)) => {
            let (first, second) = if a < b { (a, b) } else { (b, a) };
            Err(PlanError::Overlap {
                first,
                second,
                first_id: buffers[first.index()].id.clone(),
                second_id: buffers[second.index()].id.clone(),
            })
        }
    }
}

/// The checks of one buffer placed at `offset` on its own: no overflow,
/// alignment (no division when it is 1), fixed offset, capacity.
fn check_one(b: &Buffer, offset: u64, capacity: Option<u64>) -> Result<(), PlanError> {
    let end = offset
        .checked_add(b.size)
        .ok_or_else(|| PlanError::AddressOverflow {
            id: b.id.clone(),
            offset,
            size: b.size,
        })?;
    if b.alignment != 1 && offset % b.alignment != 0 {
        return Err(PlanError::Misaligned {
            id: b.id.clone(),
            offset,
            alignment: b.alignment,
        });
    }
    if let Some(fixed) = b.fixed_offset.filter(|&f| f != offset) {
        return Err(PlanError::FixedMoved {
            id: b.id.clone(),
            fixed,
            offset,
        });
    }
    if let Some(capacity) = capacity.filter(|&c| end > c) {
        return Err(PlanError::ExceedsCapacity {
            id: b.id.clone(),
            end,
            capacity,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Buffer;
    use crate::testutil::problem;

    proptest::proptest! {
        /// Random (mostly invalid) plans: the sweep agrees with checking
        /// every pair, so it can both accept and reject.
        #[test]
        fn agrees_with_pairwise_check(
            spec in proptest::collection::vec((0u64..20, 1u64..8, 1u64..6, 0u64..16), 1..12)
        ) {
            let p = problem(&spec.iter().map(|&(s, len, size, _)| (s, s + len, size)).collect::<Vec<_>>());
            let plan = Plan::from_offsets(spec.iter().map(|x| x.3).collect());
            let b = p.buffers();
            let conflict = (0..b.len()).any(|i| {
                (0..i).any(|j| {
                    b[i].overlaps_in_time(&b[j])
                        && plan.offsets()[i] < plan.offsets()[j] + b[j].size
                        && plan.offsets()[j] < plan.offsets()[i] + b[i].size
                })
            });
            let result = validate(&p, &plan);
            proptest::prop_assert_eq!(result.is_err(), conflict, "{:?}", result);
            if let Err(PlanError::Overlap { first, second, .. }) = result {
                let (x, y) = (&b[first.index()], &b[second.index()]);
                let (ox, oy) = (plan.offset(first), plan.offset(second));
                proptest::prop_assert!(x.overlaps_in_time(y) && ox < oy + y.size && oy < ox + x.size);
            }
        }
    }

    #[test]
    fn accepts_valid_plans() {
        let p = problem(&[(0, 4, 4), (2, 6, 4), (4, 8, 4)]);
        validate(&p, &Plan::from_offsets(vec![0, 4, 0])).unwrap();
        validate(&Problem::default(), &Plan::default()).unwrap();
    }

    #[test]
    fn reports_the_overlapping_pair() {
        let p = problem(&[(0, 4, 4), (2, 6, 4), (4, 8, 4)]);
        assert_eq!(
            validate(&p, &Plan::from_offsets(vec![0, 3, 0]))
                .unwrap_err()
                .to_string(),
            "buffers `b0` and `b1` are alive at the same time and share addresses"
        );
        // Containment: b1 inside b0's addresses.
        let p = problem(&[(0, 4, 10), (1, 2, 2)]);
        assert!(matches!(
            validate(&p, &Plan::from_offsets(vec![0, 4])),
            Err(PlanError::Overlap {
                first: BufferIdx(0),
                second: BufferIdx(1),
                ..
            })
        ));
        // Same offset.
        assert!(validate(&p, &Plan::from_offsets(vec![0, 0])).is_err());
        // Touching addresses are fine.
        validate(&p, &Plan::from_offsets(vec![0, 10])).unwrap();
        validate(&p, &Plan::from_offsets(vec![2, 0])).unwrap();
    }

    #[test]
    fn checks_alignment_fixed_capacity_and_length() {
        let p = Problem::new(
            vec![
                Buffer::new("a", 0, 4, 4).aligned(8),
                Buffer::new("f", 0, 4, 4).fixed(16),
            ],
            Some(20),
        )
        .unwrap();
        validate(&p, &Plan::from_offsets(vec![8, 16])).unwrap();
        assert_eq!(
            validate(&p, &Plan::from_offsets(vec![4, 16]))
                .unwrap_err()
                .to_string(),
            "buffer `a`: offset 4 is not a multiple of alignment 8"
        );
        assert_eq!(
            validate(&p, &Plan::from_offsets(vec![0, 8]))
                .unwrap_err()
                .to_string(),
            "buffer `f` is fixed at offset 16 but placed at 8"
        );
        let p = p.with_capacity(Some(19));
        assert_eq!(
            validate(&p, &Plan::from_offsets(vec![0, 16]))
                .unwrap_err()
                .to_string(),
            "buffer `f` ends at 20, past the capacity 19"
        );
        assert_eq!(
            validate(&p, &Plan::from_offsets(vec![0])).unwrap_err(),
            PlanError::WrongLength {
                expected: 2,
                got: 1
            }
        );
    }
}
