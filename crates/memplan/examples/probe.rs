use memplan::*;
use std::time::Instant;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let t = Instant::now();
    let p = problem::read_problem(std::path::Path::new(&path), Lifetimes::HalfOpen).unwrap();
    eprintln!("read {:?}", t.elapsed());
    let t = Instant::now();
    let prof = sweep::LoadProfile::new(p.buffers());
    eprintln!("profile {:?}", t.elapsed());
    let t = Instant::now();
    let o = greedy::order(&p, greedy::Order::Size);
    eprintln!("order {:?}", t.elapsed());
    let t = Instant::now();
    let spans: Vec<occupancy::Span> = p.buffers().iter().map(occupancy::Span::from).collect(); let tree = occupancy::Occupancy::new(&spans); let mut out: Vec<(u64,u64)> = Vec::new();
    eprintln!("tree {:?}", t.elapsed());
    let t = Instant::now();
    let mut tot = 0usize;
    if std::env::var("Q").is_ok() { for &b in &o { out.clear(); tree.occupied_during(b.0, |a, c| out.push((a, c))); tot += out.len(); } }
    eprintln!("queries {:?} reported {}", t.elapsed(), tot);
    let t = Instant::now();
    let plan = greedy::place(&p, &o, greedy::Fit::FirstFit, None).unwrap();
    eprintln!("place {:?}", t.elapsed());
    let t = Instant::now();
    validate(&p, &plan).unwrap();
    eprintln!("validate {:?} {}", t.elapsed(), prof.loads.len());
}
