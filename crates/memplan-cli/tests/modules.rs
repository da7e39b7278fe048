//! The command line's house rule: no import cycle between its modules
//! (`bench`, `commands`, `pools`, `plot`...), read from the sources as the
//! library's layer test reads the library (the same reader: test code,
//! comments and literals are not counted).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

#[allow(dead_code)]
#[path = "../../memplan/tests/layers/graph.rs"]
mod graph;

/// Top-level module → the top-level modules its non-test code imports.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// The graph of `src/`: files grouped by top-level module (`plot/figure.rs`
/// is `plot`), the crate root (`main.rs`) left out.
fn module_graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    graph::rust_files(&src, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| graph::module_of(&src, f)).collect();
    let mut out = Graph::new();
    for file in &files {
        let module = graph::module_of(&src, file);
        let Some(top) = module.first().filter(|m| *m != "main").cloned() else {
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        let targets = out.entry(top.clone()).or_default();
        for target in graph::imports(&text, &module, &modules) {
            if let Some(t) = target.first().filter(|t| **t != top && *t != "main") {
                targets.insert(t.clone());
            }
        }
    }
    out
}

/// A cycle of `graph`, if it has one (a depth-first search).
fn cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        graph: &Graph,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(m) {
            Some(2) => return None,
            Some(1) => {
                let at = stack.iter().position(|s| s == m).unwrap_or(0);
                let mut found = stack[at..].to_vec();
                found.push(m.to_string());
                return Some(found);
            }
            _ => {}
        }
        state.insert(m.to_string(), 1);
        stack.push(m.to_string());
        for next in graph.get(m).into_iter().flatten() {
            if let Some(found) = visit(next, graph, state, stack) {
                return Some(found);
            }
        }
        stack.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    graph
        .keys()
        .find_map(|m| visit(m, graph, &mut state, &mut Vec::new()))
}

#[test]
fn the_cli_modules_import_without_cycles() {
    let graph = module_graph();
    // The reader sees the modules and their imports at all.
    assert!(graph.contains_key("commands") && graph.contains_key("plot"));
    assert!(graph["commands"].contains("output"), "{graph:?}");
    if let Some(found) = cycle(&graph) {
        panic!("import cycle: {}", found.join(" -> "));
    }
}

/// The check can fail: two modules naming each other are a cycle, through
/// a third too.
#[test]
fn a_cycle_is_seen() {
    let edges = |list: &[(&str, &str)]| {
        let mut g = Graph::new();
        for (a, b) in list {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    };
    assert_eq!(
        cycle(&edges(&[("bench", "table"), ("commands", "bench")])),
        None
    );
    let found = cycle(&edges(&[
        ("bench", "table"),
        ("table", "commands"),
        ("commands", "bench"),
    ]));
    assert_eq!(found.map(|c| c.len()), Some(4));
}
