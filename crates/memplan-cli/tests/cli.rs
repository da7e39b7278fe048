//! End-to-end tests of the `memplan` binary: outputs, exit codes and the
//! error message for every class of bad input.

use std::path::{Path, PathBuf};

use predicates::prelude::*;
use tempfile::TempDir;

mod common;
use common::*;

#[test]
fn solves_the_first_fit_note_exactly() {
    let dir = TempDir::new().unwrap();
    let plan = dir.path().join("plan.csv");
    let v = json_ok(
        memplan()
            .args(["solve", "--lifetimes", "inclusive", "--json", "-o"])
            .arg(&plan)
            .arg(example("first-fit-note.csv")),
    );
    assert_eq!(v["makespan"], 37);
    assert_eq!(v["max_load"], 37);
    assert_eq!(v["lower_bound"], 37);
    assert_eq!(v["fragmentation"], 0);
    assert_eq!(v["optimal"], true);
    assert_eq!(v["buffers"], 6);
    assert_eq!(v["solver"], "auto/greedy/size/first-fit");
    assert!(v["seconds"].as_f64().unwrap() >= 0.0);
    assert!(v["check_seconds"].as_f64().unwrap() >= 0.0);
    assert!(v["stop_latency"].is_null());
    let written = read(&plan);
    assert_eq!(
        written,
        "id,lower,upper,size,offset\n0,1,5,10,12\n1,2,6,5,28\n2,1,3,8,0\n3,4,7,4,33\n4,3,8,6,22\n5,5,9,12,0\n"
    );
    memplan()
        .args(["validate", "--lifetimes", "inclusive"])
        .arg(example("first-fit-note.csv"))
        .arg(&plan)
        .assert()
        .success()
        .stdout(predicate::str::contains("valid: 6 buffers"));
}

#[test]
fn human_summary_and_every_variant() {
    for order in ["size", "area", "lifetime", "start", "contention"] {
        for fit in ["first-fit", "best-fit"] {
            let dir = TempDir::new().unwrap();
            let plan = dir.path().join("plan.csv");
            memplan()
                .args([
                    "solve", "--solver", "greedy", "--order", order, "--fit", fit, "-o",
                ])
                .arg(&plan)
                .arg(example("layered-400.csv"))
                .assert()
                .success()
                .stdout(predicate::str::contains("buffers        400"))
                .stdout(predicate::str::contains(format!("greedy/{order}/{fit}")));
            validate_plan(example("layered-400.csv"), &plan).success();
        }
    }
}

#[test]
fn small_example_keeps_fixed_and_aligned_buffers() {
    let dir = TempDir::new().unwrap();
    let plan = dir.path().join("plan.csv");
    memplan()
        .arg("solve")
        .arg(example("small.csv"))
        .arg("-o")
        .arg(&plan)
        .assert()
        .success();
    let text = read(&plan);
    assert!(
        text.starts_with("id,lower,upper,size,alignment,offset\nweights,0,10,4096,64,0\n"),
        "{text}"
    );
    for line in text.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let (alignment, offset): (u64, u64) =
            (cells[4].parse().unwrap(), cells[5].parse().unwrap());
        assert_eq!(offset % alignment, 0, "{line}");
    }
}

#[test]
fn capacity_outcomes_and_exit_codes() {
    let dir = TempDir::new().unwrap();
    let plan = dir.path().join("plan.csv");
    // Fits.
    memplan()
        .args(["solve", "--lifetimes", "inclusive", "--capacity", "37"])
        .arg(example("first-fit-note.csv"))
        .assert()
        .success();
    // Below the max load: proven infeasible, exit 1, no file.
    fails(
        memplan()
            .args([
                "solve",
                "--lifetimes",
                "inclusive",
                "--capacity",
                "36",
                "-o",
            ])
            .arg(&plan)
            .arg(example("first-fit-note.csv")),
        1,
        "no plan within capacity 36 found: proven infeasible",
    );
    assert!(!plan.exists());
    // Above the max load but below the greedy plan: not proven.
    let out = memplan()
        .args([
            "solve",
            "--solver",
            "greedy",
            "--json",
            "--capacity",
            "190753792",
        ])
        .arg(example("layered-400.csv"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not proven infeasible"))
        .get_output()
        .stdout
        .clone();
    let v = json(&out);
    assert_eq!(v["status"], "not_found");
    assert_eq!(v["capacity"], 190753792);
}

#[test]
fn header_only_file_is_an_empty_problem() {
    let dir = TempDir::new().unwrap();
    let input = file(&dir, "empty.csv", "id,lower,upper,size\n");
    let v = json_ok(memplan().arg("solve").arg("--json").arg(&input));
    assert_eq!(v["makespan"], 0);
    assert_eq!(v["buffers"], 0);
    assert_eq!(v["optimal"], true);
}

/// Each bad input: the file, the expected message after `path:`, and that
/// no output file appears.
#[test]
fn every_bad_input_class_is_refused_with_location() {
    let cases: &[(&str, &str, &str)] = &[
        ("missing.csv", "id,lower,upper\na,0,1\n", ":1: missing required column `size`"),
        ("dupcol.csv", "id,lower,start,upper,size\n", ":1: column `start`: column given twice (also as `lower`)"),
        ("unknown.csv", "id,lower,upper,size,colour\n", ":1: column `colour`: unknown column"),
        ("nonint.csv", "id,lower,upper,size\na,0,2,4\nb,0,2,4k\n", ":3: column `size`: expected a non-negative integer, got `4k`"),
        ("negative.csv", "id,lower,upper,size\na,-1,2,4\n", ":2: column `lower`: must not be negative, got `-1`"),
        ("overflow.csv", "id,lower,upper,size\na,0,99999999999999999999,4\n", ":2: column `upper`: `99999999999999999999` does not fit in an unsigned 64-bit integer"),
        ("empty-life.csv", "id,lower,upper,size\na,5,5,1\n", ":2: column `upper`: empty lifetime: lower 5, upper 5 is empty under half-open semantics"),
        ("dupid.csv", "id,lower,upper,size\na,0,2,1\nb,0,2,1\na,3,4,1\n", ":4: column `id`: duplicate id `a` (first on line 2)"),
        ("align0.csv", "id,lower,upper,size,alignment\na,0,2,1,0\n", ":2: column `alignment`: alignment must be positive, got 0"),
        ("misaligned.csv", "id,lower,upper,size,alignment,offset\na,0,2,1,16,8\n", ":2: column `offset`: fixed offset 8 is not a multiple of alignment 16"),
        ("fixed-overlap.csv", "id,lower,upper,size,offset\na,0,4,8,0\nb,2,6,8,4\n", ":3: column `offset`: fixed buffer `b` overlaps fixed buffer `a` (line 2) in time and address"),
        ("sum-overflow.csv", "id,lower,upper,size\na,0,2,18446744073709551615\nb,3,4,1\n", ":3: column `size`: sizes (with alignment padding and fixed offsets) sum past 2^64"),
        ("fields.csv", "id,lower,upper,size\na,0,2\n", ":2: expected 4 fields as in the header, found 3"),
        ("empty-id.csv", "id,lower,upper,size\n,0,2,1\n", ":2: column `id`: empty id"),
        ("blank-lines.csv", "id,lower,upper,size\na,0,2,4\n\n\n\nb,x,2,4\n", ":6: column `lower`: expected a non-negative integer, got `x`"),
        ("crlf.csv", "id,lower,upper,size\r\na,0,2,4\r\n\r\nb,0,2,-1\r\n", ":4: column `size`: must not be negative, got `-1`"),
        ("empty-file.csv", "", ": empty file: expected a header row"),
        ("trailing-comma.csv", "id,lower,upper,size,\na,0,2,4,\n", ":1: empty column name (a trailing comma?)"),
    ];
    for (name, text, message) in cases {
        let dir = TempDir::new().unwrap();
        let input = file(&dir, name, text);
        let plan = dir.path().join("plan.csv");
        fails(
            memplan().arg("solve").arg(&input).arg("-o").arg(&plan),
            2,
            format!("{}{message}", input.display()),
        );
        assert!(!plan.exists(), "{name}: output written");
        // Every command that reads the input refuses it the same way.
        fails(memplan().arg("stats").arg(&input), 2, *message);
    }
}

#[test]
fn unreadable_file_and_usage_errors_exit_2() {
    fails(
        memplan().args(["solve", "does/not/exist.csv"]),
        2,
        "does/not/exist.csv: cannot read file: No such file or directory",
    );
    memplan()
        .args(["solve", "--no-such-flag", "x.csv"])
        .assert()
        .code(2);
    fails(
        memplan()
            .args(["solve", "--capacity", "lots"])
            .arg(example("small.csv")),
        2,
        "invalid value 'lots'",
    );
    memplan()
        .args(["solve", "--time-limit", "-1"])
        .arg(example("small.csv"))
        .assert()
        .code(2);
    memplan()
        .args(["solve", "--lifetimes", "closed"])
        .arg(example("small.csv"))
        .assert()
        .code(2);
}

#[test]
fn non_utf8_id_and_oversized_generate_are_refused() {
    let dir = TempDir::new().unwrap();
    let input = dir.path().join("bytes.csv");
    std::fs::write(&input, b"id,lower,upper,size\n\xff,0,2,4\n").unwrap();
    fails(
        memplan().arg("stats").arg(&input),
        2,
        ":2: column `id`: id is not valid UTF-8",
    );
    memplan()
        .args([
            "generate",
            "--kind",
            "random",
            "--buffers",
            "1152921504606846976",
            "-o",
        ])
        .arg(dir.path().join("huge.csv"))
        .assert()
        .code(2);
    assert!(!dir.path().join("huge.csv").exists());
}

#[test]
fn inclusive_upper_overflow_is_refused() {
    let dir = TempDir::new().unwrap();
    let input = file(
        &dir,
        "max.csv",
        "id,lower,upper,size\na,0,18446744073709551615,1\n",
    );
    memplan().arg("stats").arg(&input).assert().success();
    fails(
        memplan()
            .args(["stats", "--lifetimes", "inclusive"])
            .arg(&input),
        2,
        ":2: column `upper`: inclusive upper 18446744073709551615 cannot be converted",
    );
}

#[test]
fn validate_reports_the_offending_pair() {
    let dir = TempDir::new().unwrap();
    let input = file(
        &dir,
        "in.csv",
        "id,lower,upper,size\na,0,4,8\nb,2,6,8\nc,5,9,8\n",
    );
    let good = file(&dir, "good.csv", "id,offset\na,0\nb,8\nc,0\n");
    validate_plan(&input, &good)
        .success()
        .stdout(predicate::str::contains("makespan 16 B"));
    let bad = file(&dir, "bad.csv", "id,offset\na,0\nb,4\nc,0\n");
    invalid_plan(
        &input,
        &bad,
        "invalid plan: buffers `a` and `b` are alive at the same time and share addresses",
    );
    fails(
        memplan()
            .args(["validate", "--capacity", "15"])
            .arg(&input)
            .arg(&good),
        1,
        "buffer `b` ends at 16, past the capacity 15",
    );
    let incomplete = file(&dir, "incomplete.csv", "id,offset\na,0\nb,8\n");
    invalid_plan(
        &input,
        &incomplete,
        "incomplete.csv: invalid plan: no offset for buffer `c`",
    );
}

/// Zero-size buffers (empty tensors) are read, planned at offset 0 (or their
/// fixed offset) by every solver, validated, counted in the stats and drawn.
#[test]
fn zero_size_buffers_through_every_command() {
    let dir = TempDir::new().unwrap();
    let input = file(
        &dir,
        "in.csv",
        "id,lower,upper,size,alignment,offset\na,0,4,8,,\nz,1,3,0,64,\nb,2,6,8,,\nf,0,9,0,,8\nc,5,9,8,,\n",
    );
    for solver in ["auto", "greedy", "search", "boxing", "tela"] {
        let plan = dir.path().join(format!("{solver}.csv"));
        let v = json_ok(
            memplan()
                .args(["solve", "--json", "--solver", solver, "-o"])
                .arg(&plan)
                .arg(&input),
        );
        assert_eq!(v["makespan"], 16, "{solver}");
        assert_eq!(v["max_load"], 16, "{solver}");
        assert_eq!(v["optimal"], true, "{solver}");
        assert_eq!(v["buffers"], 5, "{solver}");
        let written = read(&plan);
        assert!(written.contains("\nz,1,3,0,64,0\n"), "{solver}: {written}");
        assert!(written.contains("\nf,0,9,0,1,8\n"), "{solver}: {written}");
        validate_plan(&input, &plan).success();
    }
    // A zero-size buffer inside a live buffer's addresses is no overlap.
    let inside = file(&dir, "inside.csv", "id,offset\na,0\nz,4\nb,8\nf,8\nc,0\n");
    invalid_plan(
        &input,
        &inside,
        "offset 4 is not a multiple of alignment 64",
    );
    let inside = file(&dir, "inside2.csv", "id,offset\na,0\nz,0\nb,8\nf,8\nc,0\n");
    validate_plan(&input, &inside).success();
    let v = json_ok(memplan().args(["stats", "--json"]).arg(&input));
    assert_eq!(v["max_load"], 16);
    assert_eq!(v["min_size"], 0);
    assert_eq!(v["buffers"], 5);
    memplan()
        .arg("plot")
        .arg(&input)
        .arg(dir.path().join("auto.csv"))
        .arg("-o")
        .arg(dir.path().join("plan.svg"))
        .assert()
        .success();
    assert!(dir.path().join("plan.svg").exists());
}

#[test]
fn generate_is_deterministic_and_solvable() {
    let dir = TempDir::new().unwrap();
    for kind in ["random", "perfect", "layered", "trace"] {
        let a = dir.path().join(format!("{kind}-a.csv"));
        let b = dir.path().join(format!("{kind}-b.csv"));
        let c = dir.path().join(format!("{kind}-c.csv"));
        for (path, seed) in [(&a, 5), (&b, 5), (&c, 6)] {
            generate(kind, 500, Some(seed), path);
        }
        let (ta, tb, tc) = (
            std::fs::read(&a).unwrap(),
            std::fs::read(&b).unwrap(),
            std::fs::read(&c).unwrap(),
        );
        assert_eq!(ta, tb, "{kind}: same seed, same file");
        assert_ne!(ta, tc, "{kind}: other seed, other file");
        let out = ok_stdout(memplan().args(["stats", "--json"]).arg(&a));
        assert_eq!(json(&out)["buffers"], 500);
        let plan = dir.path().join(format!("{kind}-plan.csv"));
        memplan()
            .arg("solve")
            .arg(&a)
            .arg("-o")
            .arg(&plan)
            .assert()
            .success();
        validate_plan(&a, &plan).success();
    }
}

#[test]
fn stats_reports_max_load() {
    let v = json_ok(
        memplan()
            .args(["stats", "--json", "--lifetimes", "inclusive"])
            .arg(example("first-fit-note.csv")),
    );
    assert_eq!(v["max_load"], 37);
    assert_eq!(v["total_size"], 45);
    assert_eq!(v["buffers"], 6);
}

#[test]
fn bench_runs_on_small_generated_instances() {
    memplan()
        .args(["bench", "--sizes", "200,400", "--all-variants"])
        .assert()
        .success()
        .stdout(predicate::str::contains("layered-400.csv"))
        .stdout(predicate::str::contains("greedy/contention/best-fit"));
}

#[test]
fn boxing_is_reproducible_and_start_address_shifts_offsets() {
    let dir = TempDir::new().unwrap();
    let input = dir.path().join("layered.csv");
    generate("layered", 600, Some(4), &input);
    let run = |name: &str, extra: &[&str]| {
        let plan = dir.path().join(name);
        let out = ok_stdout(
            memplan()
                .args([
                    "solve",
                    "--solver",
                    "boxing",
                    "--seed",
                    "9",
                    "--iterations",
                    "16",
                    "--json",
                    "-o",
                ])
                .arg(&plan)
                .arg(&input)
                .args(extra),
        );
        (json(&out), read(plan))
    };
    let (a, plan_a) = run("a.csv", &[]);
    let (b, plan_b) = run("b.csv", &[]);
    assert_eq!(plan_a, plan_b);
    assert_eq!(a["makespan"], b["makespan"]);
    assert_eq!(a["solver"], "boxing");
    let (c, plan_c) = run("c.csv", &["--start-address", "4096"]);
    assert_eq!(c["makespan"], a["makespan"]);
    let offsets = |plan: &str| -> Vec<u64> {
        plan.lines()
            .skip(1)
            .map(|l| l.rsplit(',').next().unwrap().parse().unwrap())
            .collect()
    };
    let shifted: Vec<u64> = offsets(&plan_a).iter().map(|o| o + 4096).collect();
    assert_eq!(offsets(&plan_c), shifted);
}

#[test]
fn misaligned_start_address_is_refused_before_solving() {
    let dir = TempDir::new().unwrap();
    let input = file(
        &dir,
        "p.csv",
        "id,lower,upper,size,alignment\na,0,2,8,64\nb,1,3,8,1\n",
    );
    let plan = dir.path().join("plan.csv");
    fails(
        memplan()
            .args(["solve", "--start-address", "32", "-o"])
            .arg(&plan)
            .arg(&input),
        2,
        "--start-address 32 is not a multiple of buffer `a`'s alignment 64",
    );
    assert!(!plan.exists());
}

#[test]
fn auto_is_the_default_and_spends_its_budget_to_prove_optimality() {
    let dir = TempDir::new().unwrap();
    let input = dir.path().join("perfect.csv");
    generate("perfect", 60, Some(2), &input);
    let run = |limit: &str| {
        json_ok(
            memplan()
                .args(["solve", "--json", "--time-limit", limit])
                .arg(&input),
        )
    };
    let greedy_only = run("0");
    assert!(greedy_only["solver"]
        .as_str()
        .unwrap()
        .starts_with("auto/greedy/"));
    assert_eq!(greedy_only["optimal"], false);
    let full = run("30");
    assert_eq!(full["makespan"], full["max_load"]);
    assert_eq!(full["lower_bound"], full["max_load"]);
    assert_eq!(full["optimal"], true);
    assert!(full["makespan"].as_u64() < greedy_only["makespan"].as_u64());
}

#[test]
fn tela_solver_decides_and_minimises() {
    // At the max load: found by the search itself, with its counters.
    let v = json_ok(
        memplan()
            .args([
                "solve",
                "--solver",
                "tela",
                "--json",
                "--capacity",
                "190753792",
            ])
            .arg(example("layered-400.csv")),
    );
    assert_eq!(v["solver"], "tela");
    assert_eq!(v["makespan"], 190753792);
    assert_eq!(v["optimal"], true);
    assert!(v["counters"]["steps"].as_u64().unwrap() >= 400);
    assert!(v["counters"]["minor_backtracks"].is_u64());
    assert!(v["counters"]["major_backtracks"].is_u64());
    // Too few steps to place 400 buffers: the effort is reported, in JSON
    // and in text.
    let tela_10_steps = || {
        let mut cmd = memplan();
        cmd.args([
            "solve",
            "--solver",
            "tela",
            "--step-limit",
            "10",
            "--capacity",
            "190753792",
        ])
        .arg(example("layered-400.csv"));
        cmd
    };
    let out = tela_10_steps()
        .arg("--json")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("step limit reached"))
        .get_output()
        .stdout
        .clone();
    let v = json(&out);
    assert_eq!(v["status"], "not_found");
    assert_eq!(v["counters"]["steps"], 10);
    tela_10_steps()
        .assert()
        .code(1)
        .stdout(predicate::str::contains("steps          10\n"))
        .stderr(predicate::str::contains("step limit reached"));
    // Below the max load: proven; without a capacity: minimised, fixed and
    // aligned buffers kept.
    fails(
        memplan()
            .args(["solve", "--solver", "tela", "--capacity", "8703"])
            .arg(example("small.csv")),
        1,
        "proven infeasible",
    );
    let v = json_ok(
        memplan()
            .args(["solve", "--solver", "tela", "--json"])
            .arg(example("small.csv")),
    );
    assert_eq!(
        (v["makespan"].as_u64(), v["optimal"].as_bool()),
        (Some(8704), Some(true))
    );
}

/// Solves `input` with the greedy solver into `dir/name`.
fn greedy_plan(dir: &TempDir, input: &Path, name: &str) -> PathBuf {
    let plan = dir.path().join(name);
    memplan()
        .args(["solve", "--solver", "greedy", "-o"])
        .arg(&plan)
        .arg(input)
        .assert()
        .success();
    plan
}

#[test]
fn plot_writes_svg_and_png() {
    let dir = TempDir::new().unwrap();
    let input = example("small.csv");
    let plan = greedy_plan(&dir, &input, "plan.csv");
    let svg = dir.path().join("plan.svg");
    memplan()
        .arg("plot")
        .arg(&input)
        .arg(&plan)
        .arg("-o")
        .arg(&svg)
        .assert()
        .success();
    let text = read(&svg);
    assert!(text.starts_with("<svg") || text.starts_with("<?xml"));
    assert!(text.contains("<rect") || text.contains("<path"));
    assert!(text.contains("small.csv"), "the title names the file");
    assert!(text.contains("KiB"), "addresses in human units");
    let png = dir.path().join("plan.PNG");
    memplan()
        .arg("plot")
        .arg(&input)
        .arg(&plan)
        .arg("-o")
        .arg(&png)
        .assert()
        .success();
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
    // Only the picture is written: no temporary file is left behind.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["plan.PNG", "plan.csv", "plan.svg"]);
    // To standard output, the format given; it wins over the extension.
    let out = memplan()
        .args(["plot", "--format", "png", "-o", "-"])
        .arg(&input)
        .arg(&plan)
        .assert()
        .success();
    assert!(out.get_output().stdout.starts_with(b"\x89PNG\r\n\x1a\n"));
    let out = memplan()
        .args(["plot", "--format", "svg", "-o", "-"])
        .arg(&input)
        .arg(&plan)
        .assert()
        .success();
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains("small.csv"));
    // A name without a known extension takes the format given; one with
    // the other format's extension is refused.
    let named = dir.path().join("picture.out");
    memplan()
        .args(["plot", "--format", "svg", "-o"])
        .arg(&named)
        .arg(&input)
        .arg(&plan)
        .assert()
        .success();
    assert!(read(&named).contains("<svg"));
    let png = dir.path().join("picture.png");
    memplan()
        .args(["plot", "--format", "svg", "-o"])
        .arg(&png)
        .arg(&input)
        .arg(&plan)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "picture.png: --format svg does not match the file's extension",
        ));
    assert!(!png.exists());
    // Without --format, standard output has no extension to go by.
    memplan()
        .args(["plot", "-o", "-"])
        .arg(&input)
        .arg(&plan)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(
            "standard output: the plot file must end in .svg or .png, or --format must say which",
        ));
}

#[test]
fn plot_aggregates_many_buffers_into_a_small_file() {
    let dir = TempDir::new().unwrap();
    let input = dir.path().join("random.csv");
    generate("random", 8000, None, &input);
    let plan = greedy_plan(&dir, &input, "plan.csv");
    let svg = dir.path().join("plan.svg");
    memplan()
        .args(["plot", "--lifetimes", "half-open"])
        .arg(&input)
        .arg(&plan)
        .arg("-o")
        .arg(&svg)
        .assert()
        .success();
    let text = read(&svg);
    assert!(text.contains("8,000 buffers, aggregated"));
    assert!(text.contains("<rect"));
    assert!(text.len() < 3 << 20, "{} bytes", text.len());
}

#[test]
fn plot_refuses_invalid_plans_and_bad_input() {
    let dir = TempDir::new().unwrap();
    let input = file(
        &dir,
        "in.csv",
        "id,lower,upper,size\na,0,4,8\nb,2,6,8\nc,5,9,8\n",
    );
    let out = dir.path().join("plot.svg");
    let plot = |input: &Path, plan: &Path, out: &Path| {
        let mut cmd = memplan();
        cmd.arg("plot").arg(input).arg(plan).arg("-o").arg(out);
        cmd
    };
    let overlapping = file(&dir, "bad.csv", "id,offset\na,0\nb,4\nc,0\n");
    plot(&input, &overlapping, &out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "bad.csv: invalid plan: buffers `a` and `b` are alive at the same time",
        ));
    assert!(!out.exists());
    let good = file(&dir, "good.csv", "id,offset\na,0\nb,8\nc,0\n");
    let broken = file(&dir, "broken.csv", "id,lower,upper,size\na,0,4,8k\n");
    plot(&broken, &good, &out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "broken.csv:2: column `size`: expected a non-negative integer, got `8k`",
        ));
    assert!(!out.exists());
    let jpeg = dir.path().join("plot.jpg");
    plot(&input, &good, &jpeg)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("must end in .svg or .png"));
    assert!(!jpeg.exists());
    plot(&input, &good, &out).assert().success();
}

/// Parses one CSV line of plain fields (no quoting in these tests).
fn csv_fields(line: &str) -> Vec<&str> {
    line.split(',').collect()
}

#[test]
fn bench_compares_solvers_in_csv_and_json() {
    let dir = TempDir::new().unwrap();
    let input = dir.path().join("perfect.csv");
    generate("perfect", 40, None, &input);
    // A non-CSV file in the directory is skipped.
    file(&dir, "notes.txt", "not an instance");
    let out = ok_stdout(
        memplan()
            .args([
                "bench",
                "--solvers",
                "greedy,search",
                "--time-limit",
                "0.5",
                "--format",
                "csv",
            ])
            .arg(dir.path()),
    );
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    let header = csv_fields(lines[0]);
    assert_eq!(
        header,
        [
            "instance",
            "buffers",
            "solver",
            "makespan",
            "max_load",
            "lower_bound",
            "fragmentation",
            "fragmentation_percent",
            "gap",
            "gap_percent",
            "seconds",
            "optimal",
            "status",
            "found_by",
            "reason"
        ]
    );
    for (line, solver) in lines[1..].iter().zip(["greedy", "search"]) {
        let row = csv_fields(line);
        assert_eq!(row.len(), header.len(), "{line}");
        assert_eq!((row[0], row[1], row[2]), ("perfect.csv", "40", solver));
        for numeric in &row[3..11] {
            assert!(numeric.parse::<f64>().is_ok(), "{numeric} in {line}");
        }
        assert!(["true", "false"].contains(&row[11]));
        assert_eq!(row[12], "ok");
        let makespan: u64 = row[3].parse().unwrap();
        let max_load: u64 = row[4].parse().unwrap();
        let frag: u64 = row[6].parse().unwrap();
        assert_eq!(makespan - max_load, frag);
    }

    let v = json_ok(
        memplan()
            .args(["bench", "--solvers", "greedy,search", "--format", "json"])
            .args(["--repeat", "3", "--time-limit", "0.5"])
            .arg(&input),
    );
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["solver"], "search");
    assert!(rows[1]["makespan"].as_u64().unwrap() <= rows[0]["makespan"].as_u64().unwrap());
    let summary = v["summary"].as_array().unwrap();
    assert_eq!(summary.len(), 2);
    assert_eq!(summary[1]["won"], 1);
    assert_eq!(summary[0]["failed"], 0);

    // The table, with a failure (an unreadable instance) counted per solver.
    memplan()
        .args(["bench", "--solvers", "greedy,greedy/area/best-fit"])
        .arg(&input)
        .arg(dir.path().join("missing.csv"))
        .assert()
        .success()
        .stdout(predicate::str::contains("failed: "))
        .stdout(predicate::str::contains(
            "greedy: won 1 of 2, optimal 0, failed 1",
        ))
        .stdout(predicate::str::contains(
            "greedy/area/best-fit: won 0 of 2, optimal 0, failed 1",
        ));
    fails(
        memplan()
            .args(["bench", "--solvers", "greedy,fastest"])
            .arg(&input),
        2,
        "unknown solver `fastest`",
    );
}

#[test]
fn quiet_solve_prints_nothing_on_stderr() {
    memplan()
        .args(["solve", "--quiet", "--time-limit", "0.2"])
        .arg(example("layered-400.csv"))
        .assert()
        .success()
        .stderr(predicate::str::is_empty());
}

#[test]
fn skyline_fit_is_the_tela_baseline() {
    let dir = TempDir::new().unwrap();
    let plan = dir.path().join("plan.csv");
    let v = json_ok(
        memplan()
            .args([
                "solve",
                "--solver",
                "greedy",
                "--order",
                "contention",
                "--fit",
                "skyline",
                "--json",
                "-o",
            ])
            .arg(&plan)
            .arg(example("layered-400.csv")),
    );
    assert_eq!(v["solver"], "greedy/contention/skyline");
    // This layered instance is packed without waste by the skyline.
    assert_eq!(v["makespan"], v["max_load"]);
    validate_plan(example("layered-400.csv"), &plan).success();
}

/// `-o /dev/null` discards the plan and leaves the device in place (a
/// temporary file renamed over it would replace it when run as root).
#[cfg(unix)]
#[test]
fn output_to_a_device_writes_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let null = Path::new("/dev/null");
    if !std::fs::metadata(null).is_ok_and(|m| m.file_type().is_char_device()) {
        eprintln!("skipped: /dev/null is not a character device here");
        return;
    }
    memplan()
        .args(["solve", "--solver", "greedy", "-o", "/dev/null"])
        .arg(example("small.csv"))
        .assert()
        .success();
    assert!(std::fs::metadata(null)
        .unwrap()
        .file_type()
        .is_char_device());
}

/// `memplan --help` and `memplan solve --help` end with examples (issue 41),
/// as `-h` does too.
#[test]
fn help_ends_with_examples() {
    for flag in ["--help", "-h"] {
        let out = memplan().arg(flag).assert().success();
        let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        let examples = text.find("Examples:").expect("memplan --help has examples");
        assert!(examples > text.find("Commands:").unwrap(), "{text}");
        for line in [
            "memplan solve examples/layered-400.csv -o plan.csv",
            "memplan validate examples/layered-400.csv plan.csv",
            "memplan plot examples/layered-400.csv plan.csv -o plan.svg",
            "memplan bench examples/layered-400.csv --solvers auto,greedy,search",
        ] {
            assert!(text[examples..].contains(line), "{line} in:\n{text}");
        }

        let out = memplan().args(["solve", flag]).assert().success();
        let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        let examples = text.find("Examples:").expect("solve --help has examples");
        assert!(examples > text.find("--seed").unwrap(), "{text}");
        for line in [
            "memplan solve examples/layered-400.csv -o plan.csv --json",
            "memplan solve in.csv --capacity 1048576 --solver search --time-limit 10",
            "memplan solve examples/pooled.csv --pools examples/pools-small.csv -o plan.csv",
        ] {
            assert!(text[examples..].contains(line), "{line} in:\n{text}");
        }
    }
}
