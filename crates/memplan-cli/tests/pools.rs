//! End-to-end tests of `solve --pools`, `validate --pools` and
//! `bench --pool-fractions`: outputs, exit codes and located errors.

use std::path::Path;

use predicates::prelude::*;
use tempfile::TempDir;

mod common;
use common::*;

/// The rows of a plan file as (id, pool, offset).
fn plan_rows(path: &Path) -> Vec<(String, String, u64)> {
    let text = read(path);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (id, pool, offset) = (at("id"), at("pool"), at("offset"));
    lines
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            (
                cells[id].to_string(),
                cells[pool].to_string(),
                cells[offset].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn solves_the_bundled_pooled_example_and_validates_it() {
    let dir = TempDir::new().unwrap();
    for strategy in ["fastest-first", "guided"] {
        let plan = dir.path().join(format!("{strategy}.csv"));
        let v = json_ok(
            memplan()
                .args(["solve", "--json", "--pool-strategy", strategy, "--pools"])
                .arg(example("pools-small.csv"))
                .arg(example("pooled.csv"))
                .arg("-o")
                .arg(&plan),
        );
        assert_eq!(v["status"], "ok");
        assert_eq!(v["buffers"], 7);
        assert_eq!(v["strategy"], strategy);
        assert_eq!(v["pools"].as_array().unwrap().len(), 3);
        assert_eq!(v["pools"][0]["name"], "tcm");
        let spill = v["spill"].as_array().unwrap();
        let bound = v["spill_bound"].as_array().unwrap();
        assert_eq!(spill.len(), 2);
        assert!(spill[0].as_u64().unwrap() >= bound[0].as_u64().unwrap());
        let rows = plan_rows(&plan);
        assert_eq!(rows.len(), 7);
        // Pinned buffers stay in their pools; the fixed one at its offset.
        assert!(rows.contains(&("weights".into(), "dram".into(), 0)));
        assert!(rows.iter().any(|r| r.0 == "conv1.out" && r.1 == "tcm"));
        assert!(rows.iter().any(|r| r.0 == "output" && r.1 == "dram"));
        // Pool alignments: 64 in tcm, 4096 in dram.
        for (id, pool, offset) in &rows {
            let a = match pool.as_str() {
                "tcm" => 64,
                "dram" => 4096,
                _ => 1,
            };
            assert_eq!(offset % a, 0, "{id} in {pool} at {offset}");
        }
        memplan()
            .arg("validate")
            .arg(example("pooled.csv"))
            .arg(&plan)
            .arg("--pools")
            .arg(example("pools-small.csv"))
            .assert()
            .success()
            .stdout(predicate::str::contains("valid: 7 buffers in 3 pools"));
    }
}

#[test]
fn guided_spills_less_than_fastest_first_on_the_layered_example() {
    let spill = |strategy: &str| {
        let out = ok_stdout(
            memplan()
                .args([
                    "solve",
                    "--json",
                    "--time-limit",
                    "0.5",
                    "--pool-strategy",
                    strategy,
                    "--pools",
                ])
                .arg(example("pools.csv"))
                .arg(example("layered-400.csv")),
        );
        json(&out)["spill"][0].as_u64().unwrap()
    };
    let (ff, guided) = (spill("fastest-first"), spill("guided"));
    assert!(guided < ff, "guided {guided}, fastest-first {ff}");
}

#[test]
fn text_summary_names_pools_and_spill() {
    memplan()
        .args(["solve", "--pools"])
        .arg(example("pools-small.csv"))
        .arg(example("pooled.csv"))
        .assert()
        .success()
        .stdout(predicate::str::contains("pool tcm"))
        .stdout(predicate::str::contains("spilled        outside `tcm`: "))
        .stdout(predicate::str::contains(
            "spilled        outside the first 2: ",
        ))
        .stdout(predicate::str::contains("strategy       guided"));
}

#[test]
fn infeasible_pools_exit_1_with_the_proof_and_no_file() {
    let dir = TempDir::new().unwrap();
    let pools = file(&dir, "pools.csv", "pool,capacity\nfast,8\nslow,8\n");
    let plan = dir.path().join("plan.csv");
    // Pinned load over the fast pool's capacity.
    let input = file(
        &dir,
        "in.csv",
        "id,lower,upper,size,pool\na,0,4,5,fast\nb,3,6,4,fast\n",
    );
    let proof = "the buffers cannot all be placed (proven): the buffers pinned to pool `fast` need 9 B at time 3, over its capacity 8";
    fails(
        memplan()
            .arg("solve")
            .arg(&input)
            .arg("--pools")
            .arg(&pools)
            .arg("-o")
            .arg(&plan),
        1,
        proof,
    );
    assert!(!plan.exists());
    // More alive at once than all pools hold.
    let input = file(
        &dir,
        "in2.csv",
        "id,lower,upper,size\na,0,4,8\nb,3,6,8\nc,3,4,1\n",
    );
    let v = json_code(
        memplan()
            .arg("solve")
            .arg(&input)
            .arg("--pools")
            .arg(&pools)
            .arg("--json"),
        1,
    );
    assert_eq!(v["status"], "infeasible");
    assert_eq!(
        v["reason"],
        "17 B are alive at time 3, over the 16 B of all pools together"
    );
}

#[test]
fn bad_pool_input_is_refused_with_its_location() {
    // `solve INPUT --pools POOLS` exits 2 with `at`'s path then `rest`.
    let refused = |input: &Path, pools: &Path, at: &Path, rest: &str| {
        let mut solve = memplan();
        solve.arg("solve").arg(input).arg("--pools").arg(pools);
        fails(&mut solve, 2, format!("{}{rest}", at.display()));
    };
    let dir = TempDir::new().unwrap();
    let pools = file(&dir, "pools.csv", "pool,capacity\nfast,8\nslow,64\n");
    let input = file(
        &dir,
        "in.csv",
        "id,lower,upper,size,pool\na,0,4,5,\nb,3,6,4,tcm\n",
    );
    refused(
        &input,
        &pools,
        &input,
        ":3: column `pool`: unknown pool `tcm` (pools: `fast`, `slow`)",
    );
    let bad = file(&dir, "bad.csv", "pool,capacity\nfast,8\nfast,16\n");
    refused(
        &input,
        &bad,
        &bad,
        ":3: column `pool`: duplicate pool `fast` (first on line 2)",
    );
    let bad = file(&dir, "bad2.csv", "pool,capacity\nfast,8k\n");
    refused(
        &input,
        &bad,
        &bad,
        ":2: column `capacity`: expected a non-negative integer, got `8k`",
    );
    let fixed = file(&dir, "fixed.csv", "id,lower,upper,size,offset\na,0,4,5,0\n");
    refused(
        &fixed,
        &pools,
        &fixed,
        ":2: column `offset`: a fixed buffer must be pinned to a pool (there are 2)",
    );
    // A pool column without --pools.
    fails(
        memplan().arg("solve").arg(&input),
        2,
        format!(
            "{}:1: column `pool`: a `pool` column needs the list of pools",
            input.display()
        ),
    );
    // --pools with --capacity or --solver.
    for extra in [["--capacity", "8"], ["--solver", "greedy"]] {
        fails(
            memplan()
                .arg("solve")
                .arg(&input)
                .arg("--pools")
                .arg(&pools)
                .args(extra),
            2,
            "cannot be used with",
        );
    }
}

#[test]
fn validate_checks_each_pool() {
    let dir = TempDir::new().unwrap();
    let pools = file(
        &dir,
        "pools.csv",
        "pool,capacity,alignment\nfast,8,4\nslow,64,\n",
    );
    let input = file(
        &dir,
        "in.csv",
        "id,lower,upper,size,pool\na,0,4,4,\nb,2,6,4,\nc,0,6,4,slow\n",
    );
    let check = |plan: &str| {
        let plan = file(&dir, "plan.csv", plan);
        memplan()
            .arg("validate")
            .arg(&input)
            .arg(&plan)
            .arg("--pools")
            .arg(&pools)
            .assert()
    };
    check("id,pool,offset\na,fast,0\nb,fast,4\nc,slow,0\n")
        .success()
        .stdout(predicate::str::contains("valid: 3 buffers in 2 pools"));
    check("id,pool,offset\na,fast,0\nb,fast,0\nc,slow,4\n")
        .code(1)
        .stderr(predicate::str::contains(
            "invalid plan: pool `fast`: buffers `a` and `b` are alive at the same time and share addresses",
        ));
    check("id,pool,offset\na,fast,0\nb,fast,2\nc,slow,0\n")
        .code(1)
        .stderr(predicate::str::contains(
            "invalid plan: pool `fast`: buffer `b`: offset 2 is not a multiple of alignment 4",
        ));
    check("id,pool,offset\na,fast,0\nb,fast,8\nc,slow,0\n")
        .code(1)
        .stderr(predicate::str::contains(
            "invalid plan: pool `fast`: buffer `b` ends at 12, past the capacity 8",
        ));
    check("id,pool,offset\na,fast,0\nb,slow,4\nc,fast,4\n")
        .code(1)
        .stderr(predicate::str::contains(
            "invalid plan: buffer `c` is pinned to pool `slow` but placed in `fast`",
        ));
    check("id,pool,offset\na,fast,0\nb,hbm,4\nc,slow,0\n")
        .code(1)
        .stderr(predicate::str::contains(
            "plan.csv:3: invalid plan: column `pool`: unknown pool `hbm` (pools: `fast`, `slow`)",
        ));
    // Without a pool column the plan is unreadable for pools.
    check("id,offset\na,0\nb,4\nc,0\n")
        .code(2)
        .stderr(predicate::str::contains("missing required column `pool`"));
}

#[test]
fn bench_compares_the_strategies() {
    let v = json_ok(
        memplan()
            .args([
                "bench",
                "--pool-fractions",
                "0.5,1",
                "--pool-fractions",
                "0.25,0.5,1",
                "--time-limit",
                "0.2",
                "--format",
                "json",
            ])
            .arg(example("layered-400.csv")),
    );
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["pools"], "0.5/1");
    assert_eq!(rows[1]["pools"], "0.25/0.5/1");
    for row in rows {
        let (ff, guided, bound) = (
            row["fastest_first_percent"].as_f64().unwrap(),
            row["guided_percent"].as_f64().unwrap(),
            row["bound_percent"].as_f64().unwrap(),
        );
        assert!(bound <= guided && guided <= ff, "{row}");
    }
    assert!(rows[0]["guided_2_percent"].is_null());
    assert!(rows[1]["guided_2_percent"].is_number());
    assert_eq!(v["summary"].as_array().unwrap().len(), 2);
    fails(
        memplan().args(["bench", "--pool-fractions", "0.5,x"]),
        2,
        "expected positive fractions",
    );
}

#[test]
fn plot_draws_one_panel_per_pool_and_checks_the_plan() {
    let dir = TempDir::new().unwrap();
    let plan = dir.path().join("plan.csv");
    memplan()
        .args(["solve", "-q", "--pools"])
        .arg(example("pools-small.csv"))
        .arg(example("pooled.csv"))
        .arg("-o")
        .arg(&plan)
        .assert()
        .success();
    let svg = dir.path().join("plan.svg");
    memplan()
        .args(["plot", "--pools"])
        .arg(example("pools-small.csv"))
        .arg(example("pooled.csv"))
        .arg(&plan)
        .arg("-o")
        .arg(&svg)
        .assert()
        .success();
    let text = read(&svg);
    for pool in ["pool tcm (capacity 4.00 KiB)", "pool sram", "pool dram"] {
        assert!(text.contains(pool), "a panel for {pool}");
    }
    let legends = text.lines().filter(|l| *l == "capacity").count();
    assert_eq!(legends, 3, "a capacity legend per panel");
    // At least 320 pixels per panel.
    assert!(text.contains("height=\"960\""));
    // A plan that breaks the pools' capacities (every offset at 1 MiB):
    // exit 1, nothing written.
    let original = read(&plan);
    let mut lines = original.lines();
    let header = lines.next().unwrap();
    let at = header.split(',').position(|h| h == "offset").unwrap();
    let mut broken_text = format!("{header}\n");
    for line in lines {
        let mut cells: Vec<&str> = line.split(',').collect();
        cells[at] = "1048576";
        broken_text.push_str(&cells.join(","));
        broken_text.push('\n');
    }
    let broken = file(&dir, "broken.csv", &broken_text);
    let out = dir.path().join("broken.svg");
    fails(
        memplan()
            .args(["plot", "--pools"])
            .arg(example("pools-small.csv"))
            .arg(example("pooled.csv"))
            .arg(&broken)
            .arg("-o")
            .arg(&out),
        1,
        "invalid plan",
    );
    assert!(!out.exists());
}
