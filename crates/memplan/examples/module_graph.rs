//! Prints the library's module graph, one file a line with the modules it
//! imports (test code, comments and literals left out, as the layer test
//! `tests/layers.rs` reads them), for a closing note or a review:
//! `cargo run -p memplan --example module_graph`.

#[path = "../tests/layers/graph.rs"]
mod graph;

fn main() {
    let (graph, _) = graph::import_graph();
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
