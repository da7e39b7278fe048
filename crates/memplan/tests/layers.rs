//! The library's house rules (lib.rs, "Imports go one way"): every module
//! imports only modules of earlier layers (or its own top-level module),
//! and no two files import each other, directly or through others.
//! Test code (after `#[cfg(test)]`, and `tests.rs` files) and comments are
//! not counted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first; a module sees only those before its own.
/// Within `solvers`, the same rule holds between solvers.
const LAYERS: &[&[&str]] = &[
    &["buffer", "quote", "named", "dispose"],
    &["geometry"],
    &["problem"],
    &["plan"],
    &["hints"],
    &["solver"],
    &["solvers::greedy"],
    &["solvers::search", "solvers::tela", "solvers::boxing"],
    &["solvers::auto"],
    &["pools", "stable"],
    &["generate", "transform"],
    &["request"],
];

/// The unit a file belongs to: `solvers::X` for solvers, else the top
/// module (`lib.rs`, `solvers/mod.rs` and `testutil.rs` are not ranked).
fn unit(module: &[String]) -> Option<String> {
    match module {
        [top, sub, ..] if top == "solvers" => Some(format!("solvers::{sub}")),
        // `solvers/mod.rs` only declares the solvers.
        [top] if top == "solvers" => None,
        [top, ..] if top != "lib" && top != "testutil" => Some(top.clone()),
        _ => None,
    }
}

fn layer(unit: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&unit))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src/solvers/greedy/mod.rs` → `["solvers", "greedy"]`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The `crate::a::b` and `super::a` paths that the non-test code of
/// `module` names, as module paths (as far as they name modules that
/// exist).
fn imports(
    text: &str,
    module: &[String],
    modules: &BTreeSet<Vec<String>>,
) -> BTreeSet<Vec<String>> {
    let mut found = BTreeSet::new();
    // A `tests.rs` file is test code from its first line.
    if module.last().is_some_and(|m| m == "tests") {
        return found;
    }
    for line in text.lines() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some((at, prefix)) = ["crate::", "super::"]
            .iter()
            .filter_map(|p| rest.find(p).map(|at| (at, *p)))
            .min()
        {
            rest = &rest[at + prefix.len()..];
            // `super` in `a/b.rs` (module a::b) is `a`.
            let base: Vec<String> = if prefix == "super::" {
                module[..module.len().saturating_sub(1)].to_vec()
            } else {
                Vec::new()
            };
            let tail: Vec<String> = rest
                .split("::")
                .map(|p| {
                    p.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect::<String>()
                })
                .take_while(|p| !p.is_empty())
                .collect();
            let path: Vec<String> = base.into_iter().chain(tail).collect();
            // The longest prefix that is a module.
            if let Some(n) = (1..=path.len())
                .rev()
                .find(|&n| modules.contains(&path[..n]))
            {
                found.insert(path[..n].to_vec());
            }
        }
    }
    found
}

/// The import graph of the library's files, and the imports that go up or
/// across the layers.
#[allow(clippy::type_complexity)]
fn import_graph() -> (BTreeMap<Vec<String>, BTreeSet<Vec<String>>>, Vec<String>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    let mut upward = Vec::new();
    for file in &files {
        let module = module_of(&src, file);
        let text = std::fs::read_to_string(file).unwrap();
        let used = imports(&text, &module, &modules);
        if let Some(from) = unit(&module) {
            let from_layer = layer(&from).unwrap_or_else(|| panic!("{from}: not in LAYERS"));
            for target in &used {
                let Some(to) = unit(target) else { continue };
                let to_layer = layer(&to).unwrap_or_else(|| panic!("{to}: not in LAYERS"));
                if to != from && to_layer >= from_layer {
                    upward.push(format!("{} -> {}", module.join("::"), target.join("::")));
                }
            }
        }
        graph.insert(module, used);
    }
    (graph, upward)
}

/// Prints the module graph (for a closing note or a review):
/// `cargo test -p memplan --test layers -- --ignored --nocapture`.
#[test]
#[ignore]
fn print_module_graph() {
    let (graph, _) = import_graph();
    for (module, used) in &graph {
        let name = if module.is_empty() {
            "lib".to_string()
        } else {
            module.join("::")
        };
        let targets: Vec<String> = used
            .iter()
            .filter(|u| *u != module)
            .map(|u| u.join("::"))
            .collect();
        println!("{name} -> {}", targets.join(", "));
    }
}

#[test]
fn imports_go_down_the_layers_without_cycles() {
    let (graph, upward) = import_graph();
    assert!(
        upward.is_empty(),
        "imports up or across the layers:\n{}",
        upward.join("\n")
    );

    // No cycle between files (a child naming its parent counts too): a
    // depth-first search over the graph.
    fn visit(
        m: &Vec<String>,
        graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        match state.get(m) {
            Some(2) => return None,
            Some(1) => {
                let at = stack.iter().position(|s| s == m).unwrap_or(0);
                return Some(stack[at..].to_vec());
            }
            _ => {}
        }
        state.insert(m.clone(), 1);
        stack.push(m.clone());
        for next in graph.get(m).into_iter().flatten() {
            if next == m {
                continue;
            }
            if let Some(cycle) = visit(next, graph, state, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        state.insert(m.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in graph.keys() {
        let mut stack = Vec::new();
        if let Some(cycle) = visit(m, &graph, &mut state, &mut stack) {
            let names: Vec<String> = cycle.iter().map(|c| c.join("::")).collect();
            panic!("import cycle: {}", names.join(" -> "));
        }
    }
}

/// The rule can fail: a file naming a module of a later layer is caught.
#[test]
fn an_upward_import_is_seen() {
    let modules: BTreeSet<Vec<String>> = [vec!["geometry".to_string()], vec!["pools".to_string()]]
        .into_iter()
        .collect();
    let text = "use crate::pools::Pool; // crate::problem\n#[cfg(test)]\nuse crate::geometry;";
    let found = imports(text, &[], &modules);
    assert_eq!(found, [vec!["pools".to_string()]].into_iter().collect());
    assert!(layer("pools") > layer("geometry"));
}
