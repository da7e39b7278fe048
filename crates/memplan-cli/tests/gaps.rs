//! End-to-end: lifetimes with gaps (MiniMalloc's `gaps` column) through
//! `stats`, `solve`, `validate` and `plot`, and the located error for a bad
//! gap.

use predicates::prelude::*;
use tempfile::TempDir;

mod common;
use common::*;

#[test]
fn gapped_example_end_to_end() {
    let dir = TempDir::new().unwrap();
    let v = json_ok(memplan().args(["stats", "--json"]).arg(example("gaps.csv")));
    assert_eq!(v["max_load"], 6);
    assert_eq!(v["hull_max_load"], 10);
    assert_eq!(
        (v["gaps"].as_u64(), v["gapped"].as_u64()),
        (Some(2), Some(2))
    );

    // Every solver's plan validates; the gap-aware ones reach the max load.
    for (solver, makespan) in [
        ("auto", Some(6)),
        ("greedy", Some(6)),
        ("search", Some(6)),
        ("boxing", None),
        ("tela", None),
    ] {
        let plan = dir.path().join(format!("{solver}.csv"));
        let v = json_ok(
            memplan()
                .args(["solve", "--json", "--solver", solver, "-o"])
                .arg(&plan)
                .arg(example("gaps.csv")),
        );
        assert_eq!(v["max_load"], 6, "{solver}");
        assert_eq!(v["lower_bound"], 6, "{solver}");
        match makespan {
            Some(m) => {
                assert_eq!(v["makespan"], m, "{solver}");
                assert_eq!(v["optimal"], true, "{solver}");
            }
            None => assert_eq!(v["counters"]["hulls"], 1, "{solver}"),
        }
        // The plan echoes the gaps column and is checked with the gaps.
        let written = read(&plan);
        assert!(
            written.starts_with("id,lower,upper,size,gaps,offset\nsaved,0,10,4,3-7,"),
            "{written}"
        );
        validate_plan(example("gaps.csv"), &plan).success();
    }

    // A plan that is valid only thanks to the gaps: valid with them, not
    // for the same buffers without the gaps column.
    let plan = file(
        &dir,
        "plan.csv",
        "id,offset\nsaved,0\ntmp1,0\ntmp2,0\nshrink,0\nlate,2\n",
    );
    validate_plan(example("gaps.csv"), &plan)
        .success()
        .stdout(predicate::str::contains("makespan 6 B"));
    let hulls = file(
        &dir,
        "hulls.csv",
        "id,lower,upper,size\nsaved,0,10,4\ntmp1,3,5,4\ntmp2,5,7,4\nshrink,10,16,6\nlate,12,16,4\n",
    );
    invalid_plan(&hulls, &plan, "buffers `saved` and `tmp1`");
    // A plan putting `late` inside `shrink`'s window is refused.
    let bad = file(
        &dir,
        "bad.csv",
        "id,offset\nsaved,0\ntmp1,0\ntmp2,0\nshrink,0\nlate,1\n",
    );
    invalid_plan(example("gaps.csv"), &bad, "buffers `shrink` and `late`");

    let picture = dir.path().join("plan.svg");
    memplan()
        .arg("plot")
        .arg(example("gaps.csv"))
        .arg(&plan)
        .arg("-o")
        .arg(&picture)
        .assert()
        .success();
    assert!(read(&picture).contains("<svg"));
}

#[test]
fn bad_gaps_are_located() {
    let dir = TempDir::new().unwrap();
    let input = file(
        &dir,
        "in.csv",
        "id,lower,upper,size,gaps\na,0,10,8,2-4\nb,3,9,4,2-5\n",
    );
    fails(
        memplan().arg("solve").arg(&input),
        2,
        "in.csv:3: column `gaps`: gap `2-5` is outside the lifetime 3-9",
    );
    let input = file(
        &dir,
        "syntax.csv",
        "id,lower,upper,size,gaps\na,0,10,8,2..4\n",
    );
    fails(
        memplan().arg("stats").arg(&input),
        2,
        "syntax.csv:2: column `gaps`: gap `2..4`: expected `lo-hi` or `lo-hi@wlo:whi`",
    );
}
