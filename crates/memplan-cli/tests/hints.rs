//! End-to-end tests of hints: the `hint` column, `--ignore-hints`,
//! `--stable` and `--stable-makespan`, the JSON report and located errors.

use std::path::Path;

use predicates::prelude::*;
use tempfile::TempDir;

mod common;
use common::*;

/// The offsets of a plan file by row.
fn offsets(path: &Path) -> Vec<u64> {
    let text = read(path);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = header.iter().position(|h| *h == "offset").unwrap();
    lines
        .map(|l| l.split(',').nth(at).unwrap().parse().unwrap())
        .collect()
}

#[test]
fn hints_are_tried_first_and_reported() {
    let dir = TempDir::new().unwrap();
    // First fit would put a at 0 and b at 8: the hints swap them.
    let input = file(
        &dir,
        "in.csv",
        "id,lower,upper,size,hint\na,0,4,8,8\nb,1,3,8,0\nc,4,6,8,-1\n",
    );
    let plan = dir.path().join("plan.csv");
    let out = memplan()
        .args(["solve", "--json", "--solver", "greedy"])
        .arg(&input)
        .arg("-o")
        .arg(&plan)
        .assert()
        .success();
    let v = stdout_json(out);
    assert_eq!(v["hints"], 2);
    assert_eq!(v["hints_kept"], 2);
    assert_eq!(offsets(&plan), [8, 0, 0]);
    validate_plan(&input, &plan).success();
    // Ignored: first fit.
    let out = memplan()
        .args(["solve", "--json", "--solver", "greedy", "--ignore-hints"])
        .arg(&input)
        .arg("-o")
        .arg(&plan)
        .assert()
        .success();
    assert_eq!(stdout_json(out)["hints_kept"], 0);
    assert_eq!(offsets(&plan), [0, 8, 0]);
    // The text summary says how many were kept.
    memplan()
        .args(["solve", "--solver", "greedy"])
        .arg(&input)
        .assert()
        .success()
        .stdout(predicate::str::contains("hints kept     2 of 2"));
}

#[test]
fn stable_keeps_the_bundled_example_s_hints() {
    let dir = TempDir::new().unwrap();
    let plan = dir.path().join("plan.csv");
    let out = memplan()
        .args(["solve", "--json", "--stable", "--time-limit", "0.3"])
        .arg(example("hints.csv"))
        .arg("-o")
        .arg(&plan)
        .assert()
        .success();
    let v = stdout_json(out);
    let (hints, kept, bound) = (
        v["hints"].as_u64().unwrap(),
        v["hints_kept"].as_u64().unwrap(),
        v["counters"]["hints_bound"].as_u64().unwrap(),
    );
    assert_eq!(hints, 199);
    assert!(kept >= 190 && kept <= bound && bound < hints, "{v}");
    assert_eq!(v["counters"]["hints_kept"], kept);
    assert!(v["counters"]["hints_kept_by_solver"].as_u64().unwrap() <= kept);
    assert_eq!(v["makespan"], v["counters"]["stable_makespan"]);
    validate_plan(example("hints.csv"), &plan).success();
}

#[test]
fn stable_makespan_bounds_the_plan() {
    let dir = TempDir::new().unwrap();
    // a and b want 0 together; c's hint ends at 24.
    let input = file(
        &dir,
        "in.csv",
        "id,lower,upper,size,hint\na,0,4,8,0\nb,1,3,8,0\nc,4,6,16,8\n",
    );
    let run = |m: &str| {
        memplan()
            .args(["solve", "--json", "--solver", "greedy", "--stable"])
            .args(["--stable-makespan", m])
            .arg(&input)
            .assert()
    };
    let v = json(&run("24").success().get_output().stdout);
    assert_eq!(
        (&v["hints_kept"], &v["counters"]["hints_bound"]),
        (&2.into(), &2.into())
    );
    let v = json(&run("16").success().get_output().stdout);
    assert_eq!(v["makespan"], 16);
    assert_eq!(v["hints_kept"], 1);
    // Below the max load: no plan, exit 1.
    run("15").code(1);
    // --stable-makespan needs --stable; --stable conflicts with --pools
    // and --ignore-hints.
    memplan()
        .args(["solve", "--stable-makespan", "8"])
        .arg(&input)
        .assert()
        .code(2);
    memplan()
        .args(["solve", "--stable", "--ignore-hints"])
        .arg(&input)
        .assert()
        .code(2);
}

#[test]
fn bad_hints_are_located_and_write_nothing() {
    let dir = TempDir::new().unwrap();
    let plan = dir.path().join("plan.csv");
    for (row, message) in [
        (
            "b,0,4,8,1,-5",
            "in.csv:3: column `hint`: expected an offset or -1 (no hint), got `-5`",
        ),
        (
            "b,0,4,8,4,6",
            "in.csv:3: column `hint`: hint 6 is not a multiple of alignment 4",
        ),
    ] {
        let input = file(
            &dir,
            "in.csv",
            &format!("id,lower,upper,size,alignment,hint\na,0,4,8,1,\n{row}\n"),
        );
        fails(
            memplan().arg("solve").arg(&input).arg("-o").arg(&plan),
            2,
            message,
        );
        assert!(!plan.exists());
    }
}
