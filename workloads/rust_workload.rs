// rust_workload [SECONDS]: a Rust program whose hot function sits in a module, for Rust
// demangling and frame-pointer unwinding (built with -C force-frame-pointers=yes).
//
// Stacks (leaf first): rust_workload::hot::spin <- rust_workload::hot::run
// <- rust_workload::main <- std's runtime frames.
use std::time::{Duration, Instant};

mod hot {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Instant;

    static SINK: AtomicU64 = AtomicU64::new(1);

    #[inline(never)]
    pub fn spin(n: u32) -> u64 {
        let mut x = SINK.load(Ordering::Relaxed);
        for _ in 0..n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
        }
        SINK.store(x, Ordering::Relaxed);
        x
    }

    #[inline(never)]
    pub fn run(deadline: Option<Instant>) {
        loop {
            spin(100_000);
            if let Some(d) = deadline {
                if Instant::now() >= d {
                    return;
                }
            }
        }
    }
}

fn main() {
    let deadline = match std::env::args().nth(1) {
        None => None,
        Some(a) => match a.parse::<f64>() {
            Ok(s) if s == 0.0 => None,
            Ok(s) if s > 0.0 && s < 1e6 => Some(Instant::now() + Duration::from_secs_f64(s)),
            _ => {
                eprintln!("rust_workload: bad run time '{}': want seconds, 0 for no limit", a);
                std::process::exit(2);
            }
        },
    };
    hot::run(deadline);
}
