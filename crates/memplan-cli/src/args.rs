//! Command-line arguments (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use memplan::generate::Kind;
use memplan::named::Named;
use memplan::pools::Strategy;
use memplan::request;
use memplan::solvers::boxing::BoxingOptions;
use memplan::solvers::greedy::{Fit, Order};
use memplan::solvers::search::{Preorder, SearchOptions};
use memplan::solvers::tela::TelaOptions;
use memplan::solvers::SolverKind;
use memplan::Lifetimes;

use crate::named::named;

/// The examples at the end of `memplan --help` (tests/cli.rs checks them).
pub const MAIN_EXAMPLES: &str = "\
Examples:
  Plan the bundled example, check the plan and draw it:
    memplan solve examples/layered-400.csv -o plan.csv
    memplan validate examples/layered-400.csv plan.csv
    memplan plot examples/layered-400.csv plan.csv -o plan.svg

  Compare solvers on an instance:
    memplan bench examples/layered-400.csv --solvers auto,greedy,search --time-limit 1

Documentation: README.md and docs/cli.md.";

/// The examples at the end of `memplan solve --help` (tests/cli.rs checks
/// them).
pub const SOLVE_EXAMPLES: &str = "\
Examples:
  Minimise the makespan with the default portfolio, a summary as JSON:
    memplan solve examples/layered-400.csv -o plan.csv --json

  Fit a hard capacity, or prove there is none, within 10 seconds:
    memplan solve in.csv --capacity 1048576 --solver search --time-limit 10

  Share buffers out among several memories, fastest first:
    memplan solve examples/pooled.csv --pools examples/pools-small.csv -o plan.csv";

#[derive(Parser, Debug)]
#[command(
    name = "memplan",
    version,
    about = "Static memory planner: gives every buffer an offset so that buffers alive at the same time never share an address.",
    after_help = MAIN_EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Plan a problem: assign an offset to every buffer.
    #[command(after_help = SOLVE_EXAMPLES)]
    Solve(SolveArgs),
    /// Check a plan against its problem independently.
    Validate(ValidateArgs),
    /// Print statistics of a problem (max load, sizes, lifetimes).
    Stats(StatsArgs),
    /// Generate a synthetic problem.
    Generate(GenerateArgs),
    /// Draw a plan (time × address) as SVG or PNG.
    Plot(PlotArgs),
    /// Compare solvers on instances, or time the greedy variants.
    Bench(BenchArgs),
}

#[derive(Args, Debug)]
pub struct InputArgs {
    /// Problem CSV: id,lower,upper,size[,alignment][,offset].
    pub input: PathBuf,
    /// How to read the lower/upper columns.
    #[arg(long, value_parser = named::<Lifetimes>(), default_value = request::DEFAULT_LIFETIMES.name())]
    pub lifetimes: Lifetimes,
}

#[derive(Args, Debug)]
pub struct SolveArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Write the plan CSV here (the input's columns plus `offset`).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Solver to run.
    #[arg(long, value_parser = named::<SolverKind>(), default_value = request::DEFAULT_SOLVER.name())]
    pub solver: SolverKind,
    /// Greedy placement order.
    #[arg(long, value_parser = named::<Order>(), default_value = memplan::solvers::greedy::Greedy::default().order.name())]
    pub order: Order,
    /// Greedy fitting rule.
    #[arg(long, value_parser = named::<Fit>(), default_value = memplan::solvers::greedy::Greedy::default().fit.name())]
    pub fit: Fit,
    /// The plan must fit in this many bytes (exit 1 if not found).
    #[arg(long, conflicts_with = "pools")]
    pub capacity: Option<u64>,
    /// Several memories: a CSV `pool,capacity[,alignment]`, fastest first.
    /// Every buffer goes into one pool (the input's optional `pool` column
    /// pins it); the plan gets a `pool` column.
    #[arg(long, value_name = "POOLS.csv", conflicts_with_all = ["solver", "start_address"])]
    pub pools: Option<PathBuf>,
    /// With --pools: how buffers are shared out among the pools.
    #[arg(long, value_parser = named::<Strategy>(), default_value = request::DEFAULT_POOL_STRATEGY.name(), requires = "pools")]
    pub pool_strategy: Strategy,
    /// Time budget in seconds (default: none); with --effort (and for
    /// auto, which always has one) only a safety cap, reported when hit
    /// (auto and the guided pool strategy: 30 without a limit; auto with
    /// 0: its greedy plans only, uncut; a greedy solver cut by the limit
    /// completes its plan by a fast fallback and says so). Without
    /// --effort, auto's effort is 1 per second of the limit (a fixed
    /// conversion, never measured: the same limit and seed give the same
    /// plan unless the clock cuts the run first).
    #[arg(long, value_parser = parse_seconds)]
    pub time_limit: Option<f64>,
    /// Work budget, a multiple of the default (auto: 1 per second of
    /// --time-limit, else 1; the effort given wins; what a unit costs in
    /// seconds is measured in docs/cli.md): search nodes, boxing
    /// iterations and tela steps scale with it, so that the plan does not
    /// depend on the machine's load; --time-limit is then only a safety cap.
    #[arg(long, value_parser = parse_factor)]
    pub effort: Option<f64>,
    /// Seed of randomized solvers.
    #[arg(long, default_value_t = request::DEFAULT_SEED)]
    pub seed: u64,
    /// Print one JSON object instead of the human summary.
    #[arg(long)]
    pub json: bool,
    /// No progress line on stderr (it is shown only when stderr is a
    /// terminal and the solve lasts over half a second).
    #[arg(short, long)]
    pub quiet: bool,
    /// Write offsets as addresses from this base (a multiple of every
    /// buffer's alignment); statistics stay relative to it.
    #[arg(long, default_value_t = 0)]
    pub start_address: u64,
    /// Solve as if the input had no `hint` column (by default every solver
    /// tries a buffer's hint first).
    #[arg(long, conflicts_with = "stable")]
    pub ignore_hints: bool,
    /// Among plans with the best makespan found (or within
    /// --stable-makespan), keep as many buffers at their hint as possible.
    #[arg(long, conflicts_with = "pools")]
    pub stable: bool,
    /// With --stable: keep hints among plans within this makespan.
    #[arg(long, value_name = "M", requires = "stable")]
    pub stable_makespan: Option<u64>,
    /// Auto: no head start for the search's exact fill (at a capacity with
    /// at most 1% slack, tela and boxing otherwise wait up to 0.5 s for the
    /// search, so that its fill gets both cores; the answer is the same).
    #[arg(long)]
    pub no_head_start: bool,
    #[command(flatten)]
    pub search: SearchArgs,
    #[command(flatten)]
    pub boxing: BoxingArgs,
    #[command(flatten)]
    pub tela: TelaArgs,
}

impl SolveArgs {
    /// The library's request these flags make (the limits were checked by
    /// the request's own checks as they were parsed).
    pub fn request(&self) -> Result<request::Request, request::RequestError> {
        let mut r = request::Request {
            solver: self.solver,
            greedy: memplan::solvers::greedy::Greedy {
                order: self.order,
                fit: self.fit,
            },
            search: self.search.options(),
            boxing: self.boxing.options(),
            tela: self.tela.options(),
            auto: memplan::solvers::auto::AutoOptions {
                head_start: !self.no_head_start,
                ..Default::default()
            },
            seed: self.seed,
            ignore_hints: self.ignore_hints,
            stable: self.stable,
            stable_makespan: self.stable_makespan,
            pool_strategy: self.pool_strategy,
            ..request::Request::default()
        };
        r.set_time_limit(self.time_limit)?;
        r.set_effort(self.effort)?;
        r.check()?;
        Ok(r)
    }
}

/// Options and ablation switches of `--solver tela` (TelaMalloc), one
/// flag per field of the library's `TelaOptions`.
#[derive(Args, Debug)]
pub struct TelaArgs {
    /// Tela: candidate placements tried per capacity before giving up
    /// (§7.2).
    #[arg(long, default_value_t = TelaOptions::default().step_limit)]
    pub step_limit: u64,
    /// Tela: backtracks allowed inside the subtree of a backtrack point
    /// before it is abandoned (§5.4).
    #[arg(long, default_value_t = TelaOptions::default().subtree_backtracks)]
    pub subtree_backtracks: u64,
    /// Tela: at most this many candidates per decision point (§5.4).
    #[arg(long, default_value_t = TelaOptions::default().max_candidates as u64)]
    pub max_candidates: u64,
    /// Tela: one phase, no contention-based grouping (§5.3).
    #[arg(long)]
    pub no_phases: bool,
    /// Tela: backtrack one level up, no conflict-directed major
    /// backtracks (§5.4).
    #[arg(long)]
    pub no_backjump: bool,
    /// Tela: the paper's candidate picks (the best buffer of each
    /// heuristic wherever its floor lies), not the bottom row.
    #[arg(long)]
    pub no_bottom_row: bool,
    /// Tela: rank candidates by the three §5.1 heuristics only, not by
    /// contention first.
    #[arg(long)]
    pub no_contention: bool,
    /// Tela: the cross-section bound at every unplaced buffer's own floor,
    /// not only at the lowest one (MiniMalloc's effective height).
    #[arg(long)]
    pub own_floors: bool,
    /// Tela: keep the whole bottom row as candidates, not (the default),
    /// where the row's earliest section has no slack, only the row's
    /// buffers that start there (every plan covers that section's lowest
    /// free byte with one of them).
    #[arg(long)]
    pub no_tight_sections: bool,
    /// Tela: a section whose slack is at most this percentage of the
    /// capacity also counts as tight (0: only sections with no slack, where
    /// the cut loses no plan; above, a heuristic).
    #[arg(long, default_value_t = TelaOptions::default().tight_slack, value_name = "PERCENT", value_parser = clap::value_parser!(u32).range(0..=100))]
    pub tight_slack: u32,
    /// Tela: the listed candidates only (§5.4), not, after a candidate
    /// fails by raising other buffers' floors into a failure, those
    /// displaced buffers next at the same decision point (the default).
    #[arg(long)]
    pub no_displaced_first: bool,
    /// Tela: the displaced buffers next (the default; kept for scripts).
    #[arg(long, hide = true, conflicts_with = "no_displaced_first")]
    pub displaced_first: bool,
    /// Tela: the bottom row's candidates at every capacity, not (the
    /// default), at a capacity with no slack (every section's load is the
    /// capacity), the skyline holes: all the moves of the hole with the
    /// fewest (buffers that start where it starts and end within it), a
    /// point where a flat run of the skyline cannot be covered end to end
    /// failing, every second pair of runs mirrored in time, and the failed
    /// states remembered (the search's exact fill's reasoning).
    #[arg(long)]
    pub no_skyline_holes: bool,
    /// Tela: the skyline holes at zero slack (the default; kept for
    /// scripts).
    #[arg(long, hide = true, conflicts_with = "no_skyline_holes")]
    pub skyline_holes: bool,
    /// Tela: learned backtracking (TelaMalloc §6): at a major backtrack, a
    /// model trained offline (gradient-boosted trees, shipped as data)
    /// scores every level of the path as a target; the best, weighted by
    /// depth, when it reaches --learned-threshold, becomes the backtrack
    /// point that abandonment returns to (the search jumps to the default
    /// target), or with --learned-jump, the target.
    #[arg(long)]
    pub learned_backtracking: bool,
    /// Tela, with --learned-backtracking: jump to the learned target
    /// (TelaMalloc §6.5) instead of flagging it.
    #[arg(long)]
    pub learned_jump: bool,
    /// Tela, with --learned-backtracking: the lowest weighted score of a
    /// learned target, in tenths of a point (scores are 0 to 10).
    #[arg(long, default_value_t = TelaOptions::default().learned_threshold)]
    pub learned_threshold: u32,
    /// Tela, with --learned-backtracking: depth weighting in percent (a
    /// score is multiplied by 1 - W/100 × distance/depth).
    #[arg(long, default_value_t = TelaOptions::default().learned_depth_weight, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub learned_depth_weight: u32,
    /// Tela: steps of the first two runs; the budget doubles every second
    /// run.
    #[arg(long, default_value_t = TelaOptions::default().restart_steps)]
    pub restart_steps: u64,
    /// Tela: percentage of decision points whose first candidate swaps with
    /// another in every run after the first (0: every run alike).
    #[arg(long, default_value_t = TelaOptions::default().restart_noise)]
    pub restart_noise: u32,
}

impl TelaArgs {
    /// The library's options.
    pub fn options(&self) -> memplan::solvers::tela::TelaOptions {
        memplan::solvers::tela::TelaOptions {
            step_limit: self.step_limit,
            subtree_backtracks: self.subtree_backtracks,
            max_candidates: usize::try_from(self.max_candidates).unwrap_or(usize::MAX),
            phases: !self.no_phases,
            backjump: !self.no_backjump,
            bottom_row: !self.no_bottom_row,
            contention: !self.no_contention,
            own_floors: self.own_floors,
            tight_sections: !self.no_tight_sections,
            tight_slack: self.tight_slack,
            displaced_first: !self.no_displaced_first,
            skyline_holes: !self.no_skyline_holes,
            restart_steps: self.restart_steps,
            restart_noise: self.restart_noise,
            learned_backtracking: self.learned_backtracking,
            learned_jump: self.learned_jump,
            learned_threshold: self.learned_threshold,
            learned_depth_weight: self.learned_depth_weight,
            warm_start: None,
        }
    }
}

/// Options of `--solver boxing` (idealloc §5.1).
#[derive(Args, Debug)]
pub struct BoxingArgs {
    /// Boxing: box-unbox-squeeze iterations at most.
    #[arg(long, default_value_t = BoxingOptions::default().iterations)]
    pub iterations: u32,
    /// Boxing: stop once fragmentation is at most this % of the max load.
    #[arg(long, default_value_t = BoxingOptions::default().target_fragmentation)]
    pub target_fragmentation: f64,
    /// Boxing: squeeze by sparse offset alone, as in the paper (§4), not
    /// by size class first.
    #[arg(long)]
    pub no_size_classes: bool,
    /// Boxing: no direct answer for the elementary cases (§2.1: no two
    /// buffers alive together, or one size); bootstrap and iterate.
    #[arg(long)]
    pub no_elementary_cases: bool,
}

impl BoxingArgs {
    /// The library's options.
    pub fn options(&self) -> memplan::solvers::boxing::BoxingOptions {
        memplan::solvers::boxing::BoxingOptions {
            iterations: self.iterations,
            target_fragmentation: self.target_fragmentation,
            size_classes: !self.no_size_classes,
            elementary_cases: !self.no_elementary_cases,
            bootstrap: None,
        }
    }
}

/// Ablation switches of `--solver search` (MiniMalloc).
#[derive(Args, Debug)]
pub struct SearchArgs {
    /// Search: explore non-canonical partial solutions too (§6.1 off).
    #[arg(long)]
    pub no_canonical: bool,
    /// Search: no cross-section inference (§6.2 eq. 3 off).
    #[arg(long)]
    pub no_section_inference: bool,
    /// Search: no effective section height in eq. 3.
    #[arg(long)]
    pub no_effective_height: bool,
    /// Search: no dominance pruning (§6.3 off).
    #[arg(long)]
    pub no_dominance: bool,
    /// Search: follow the static preorder only (no lowest-offset-first).
    #[arg(long)]
    pub no_dynamic_order: bool,
    /// Search: do not split independent time groups.
    #[arg(long)]
    pub no_decompose: bool,
    /// Search: parts found during the search keep the ranks of the whole
    /// problem instead of ranks recomputed from their remaining load.
    #[arg(long)]
    pub no_rerank_parts: bool,
    /// Search: no hatless pruning.
    #[arg(long)]
    pub no_hatless: bool,
    /// Search: no exact fill (filling the skyline's lowest hole first at capacities with at most 1% slack).
    #[arg(long)]
    pub no_exact_fill: bool,
    /// Search: static preorders (T section total, W width, A area), each searched in its own thread in lockstep (or in turn with --round-robin); the first listed to decide wins.
    #[arg(long, value_parser = named::<Preorder>(), value_delimiter = ',', default_values = SearchOptions::default().preorders.iter().map(|p| p.name()).collect::<Vec<_>>())]
    pub preorders: Vec<Preorder>,
    /// Search: one preorder at a time, round robin with a node limit doubled each round (MiniMalloc's reference), instead of all in lockstep threads.
    #[arg(long)]
    pub round_robin: bool,
}

impl SearchArgs {
    /// The library options these flags select.
    pub fn options(&self) -> memplan::solvers::search::SearchOptions {
        memplan::solvers::search::SearchOptions {
            canonical: !self.no_canonical,
            section_inference: !self.no_section_inference,
            effective_height: !self.no_effective_height,
            dominance: !self.no_dominance,
            dynamic_order: !self.no_dynamic_order,
            preorders: self.preorders.clone(),
            schedule: if self.round_robin {
                memplan::solvers::search::Schedule::RoundRobin
            } else {
                memplan::solvers::search::Schedule::Lockstep
            },
            decompose: !self.no_decompose,
            rerank_parts: !self.no_rerank_parts,
            hatless: !self.no_hatless,
            exact_fill: !self.no_exact_fill,
            warm_start: None,
        }
    }
}

#[derive(Args, Debug)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Plan CSV with `id` and `offset` columns.
    pub plan: PathBuf,
    /// Also check that every buffer ends within this many bytes.
    #[arg(long, conflicts_with = "pools")]
    pub capacity: Option<u64>,
    /// The pool file the plan was made for: the plan needs a `pool` column,
    /// and each pool is checked on its own (its capacity and alignment).
    #[arg(long, value_name = "POOLS.csv")]
    pub pools: Option<PathBuf>,
    /// Print one JSON object instead of the human summary.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct PlotArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Plan CSV with `id` and `offset` columns (checked first).
    pub plan: PathBuf,
    /// Picture to write: `.svg` or `.png` (the format comes from the
    /// extension, or from --format), or `-` for standard output.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Picture format, whatever the output's name (needed for `-o -`).
    #[arg(long, value_enum)]
    pub format: Option<PlotFormat>,
    /// Width in pixels.
    #[arg(long, default_value_t = 1200, value_parser = clap::value_parser!(u32).range(400..=10_000))]
    pub width: u32,
    /// Height in pixels (with --pools: at least 320 per pool).
    #[arg(long, default_value_t = 800, value_parser = clap::value_parser!(u32).range(300..=10_000))]
    pub height: u32,
    /// The plan is pooled (a `pool` column): one panel per pool of this
    /// file (`pool,capacity[,alignment]`), fastest first, each with its
    /// capacity.
    #[arg(long, value_name = "POOLS.csv")]
    pub pools: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct StatsArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Print one JSON object instead of the human summary.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct GenerateArgs {
    /// Kind of instance.
    #[arg(long, value_parser = named::<Kind>())]
    pub kind: Kind,
    /// Number of buffers (at most 100,000,000).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=100_000_000))]
    pub buffers: u32,
    /// Random seed: the same seed gives the same file.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Output CSV (half-open lifetimes).
    #[arg(short, long)]
    pub output: PathBuf,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Instance files or directories of CSV files; without any, generated
    /// instances of `--sizes` buffers of kind `--kind` are used.
    pub inputs: Vec<PathBuf>,
    /// Sizes of the generated instances.
    #[arg(long, value_delimiter = ',', default_values_t = [10_000u32, 100_000, 1_000_000],
        value_parser = clap::value_parser!(u32).range(0..=100_000_000))]
    pub sizes: Vec<u32>,
    /// Kind of the generated instances.
    #[arg(long, value_parser = named::<Kind>(), default_value = "layered")]
    pub kind: Kind,
    /// Seed of the generated instances.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Compare these solvers (comma-separated: auto, greedy, search,
    /// boxing, tela, or a greedy variant such as greedy/size/first-fit)
    /// instead of timing the greedy variants.
    #[arg(long, value_delimiter = ',')]
    pub solvers: Option<Vec<String>>,
    /// Time budget in seconds given to each solver run (with --solvers or
    /// --reference); with --effort (and for auto) only a safety cap.
    #[arg(long, default_value_t = 1.0, value_parser = parse_seconds)]
    pub time_limit: f64,
    /// Compare the pool strategies (fastest-first, guided) instead: pools
    /// with capacities at these fractions of each instance's max load,
    /// fastest first (e.g. `0.5,1`); repeat the option for several pool
    /// sets.
    #[arg(long, value_name = "F1,F2,...", value_parser = parse_fractions, conflicts_with = "solvers")]
    pub pool_fractions: Vec<Fractions>,
    /// Work budget given to each solver run (with --solvers), as
    /// `solve --effort`; auto uses 1 per second of --time-limit without
    /// it.
    #[arg(long, value_parser = parse_factor)]
    pub effort: Option<f64>,
    /// Without --solvers: time every order × fit instead of size/first-fit only.
    #[arg(long)]
    pub all_variants: bool,
    /// Runs per measurement; the median time is reported.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// Differential mode: run this MiniMalloc reference binary beside
    /// memplan (`search`, or the first of --solvers) at each instance's
    /// capacity (--capacity, else the `NAME.CAPACITY.csv` file name, else
    /// the max load), both within --time-limit, and report who decided
    /// each instance and memplan's time over the reference's.
    #[arg(long)]
    pub reference: Option<PathBuf>,
    /// Differential mode: also run answer-preserving copies of every
    /// input (time reversed, rows shuffled, ids renamed, sizes times 3).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub transforms: Vec<TransformArg>,
    /// Differential mode: the capacity of every instance.
    #[arg(long)]
    pub capacity: Option<u64>,
    /// Output: an aligned table in human units, or CSV / JSON with raw
    /// numbers (bytes, seconds).
    #[arg(long, value_enum, default_value_t = BenchFormat::Table)]
    pub format: BenchFormat,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransformArg {
    /// Time runs backwards.
    Reverse,
    /// Rows in a random order.
    Shuffle,
    /// New ids.
    Rename,
    /// Sizes and the capacity times 3.
    Scale,
}

/// Picture formats of `plot`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlotFormat {
    Svg,
    Png,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchFormat {
    Table,
    Csv,
    Json,
}

/// A time limit, checked by the library's request ([`request::time_limit`]).
fn parse_seconds(s: &str) -> Result<f64, String> {
    let v = s
        .parse::<f64>()
        .map_err(|_| format!("expected a number of seconds, got `{s}`"))?;
    request::time_limit(Some(v)).map_err(|e| e.message)?;
    Ok(v)
}

/// Pool capacities as fractions of an instance's max load, fastest first.
#[derive(Clone, Debug, PartialEq)]
pub struct Fractions(pub Vec<f64>);

fn parse_fractions(s: &str) -> Result<Fractions, String> {
    s.split(',')
        .map(|f| match f.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 && v <= 1e6 => Ok(v),
            _ => Err(format!(
                "expected positive fractions of the max load separated by commas, got `{f}`"
            )),
        })
        .collect::<Result<Vec<f64>, String>>()
        .map(Fractions)
}

/// A work budget, checked by the library's request ([`request::effort`]).
fn parse_factor(s: &str) -> Result<f64, String> {
    let v = s
        .parse::<f64>()
        .map_err(|_| format!("expected a multiple of the default effort, got `{s}`"))?;
    request::effort(Some(v)).map_err(|e| e.message)?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn solve_args(extra: &[&str]) -> SolveArgs {
        let argv = ["memplan", "solve", "in.csv"].iter().chain(extra);
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Solve(args) => args,
            _ => unreachable!(),
        }
    }

    /// The flags' defaults are the library's: a solver run from the
    /// command line without flags is the library's default solver.
    #[test]
    fn defaults_are_the_library_defaults() {
        let args = solve_args(&[]);
        assert_eq!(
            args.tela.options(),
            memplan::solvers::tela::TelaOptions::default()
        );
        assert_eq!(
            args.search.options(),
            memplan::solvers::search::SearchOptions::default()
        );
        let boxing = args.boxing.options();
        let library = memplan::solvers::boxing::BoxingOptions::default();
        assert_eq!(
            (
                boxing.iterations,
                boxing.size_classes,
                boxing.elementary_cases
            ),
            (
                library.iterations,
                library.size_classes,
                library.elementary_cases
            )
        );
        assert_eq!(boxing.target_fragmentation, library.target_fragmentation);
    }

    /// Every tela switch reaches its field.
    #[test]
    fn tela_switches_reach_the_options() {
        let args = solve_args(&[
            "--no-phases",
            "--no-backjump",
            "--no-bottom-row",
            "--no-contention",
            "--own-floors",
            "--no-tight-sections",
            "--tight-slack",
            "2",
            "--no-displaced-first",
            "--no-skyline-holes",
            "--subtree-backtracks",
            "7",
            "--max-candidates",
            "3",
            "--restart-steps",
            "99",
            "--restart-noise",
            "0",
            "--step-limit",
            "1234",
            "--learned-backtracking",
            "--learned-jump",
            "--learned-threshold",
            "42",
            "--learned-depth-weight",
            "30",
        ]);
        let o2 = args.tela.options();
        assert!(o2.learned_backtracking && o2.learned_jump);
        assert!(!solve_args(&[]).tela.options().learned_jump);
        assert_eq!((o2.learned_threshold, o2.learned_depth_weight), (42, 30));
        let o = args.tela.options();
        assert!(!o.phases && !o.backjump && !o.bottom_row && !o.contention && o.own_floors);
        assert!(!o.displaced_first && !o.tight_sections && !o.skyline_holes);
        assert!(solve_args(&[]).tela.options().displaced_first);
        assert!(solve_args(&[]).tela.options().skyline_holes);
        assert!(
            solve_args(&["--skyline-holes"])
                .tela
                .options()
                .skyline_holes
        );
        assert_eq!(o.tight_slack, 2);
        assert!(solve_args(&[]).tela.options().tight_sections);
        assert_eq!(solve_args(&[]).tela.options().tight_slack, 5);
        assert!(solve_args(&[]).request().unwrap().auto.head_start);
        assert!(
            !solve_args(&["--no-head-start"])
                .request()
                .unwrap()
                .auto
                .head_start
        );
        assert!(
            solve_args(&["--displaced-first"])
                .tela
                .options()
                .displaced_first
        );
        assert_eq!(
            (
                o.subtree_backtracks,
                o.max_candidates,
                o.restart_steps,
                o.restart_noise,
                o.step_limit
            ),
            (7, 3, 99, 0, 1234)
        );
        // The library's request refuses what is out of range.
        let refused =
            |flag: &str, value: &str| solve_args(&[flag, value]).request().unwrap_err().field;
        assert_eq!(refused("--restart-noise", "101"), "restart_noise");
        assert_eq!(refused("--max-candidates", "0"), "max_candidates");
        assert_eq!(refused("--restart-steps", "0"), "restart_steps");
        assert_eq!(
            refused("--target-fragmentation", "nan"),
            "target_fragmentation"
        );
    }
}
