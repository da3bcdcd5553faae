//! Slurm's job states, in one table: what each means to the pilots. `squeue -o %T` prints
//! them; the lost-pilot check asks whether a job's processes may still live, `dbstart
//! --slurm` whether a job of an earlier submission is still to run or running.

/// A state's meaning for the pilots.
struct JobState {
    name: &'static str,
    /// Processes of the job may still live: a pilot in this state is not lost, however long
    /// its heartbeat has been silent (a suspended pilot writes none, yet it will go on).
    processes: bool,
    /// No run of the job comes any more: it does not count as a pilot pending or running.
    ended: bool,
}

const fn state(name: &'static str, processes: bool, ended: bool) -> JobState {
    JobState {
        name,
        processes,
        ended,
    }
}

/// Every job state of Slurm's `squeue(1)`. A state not listed (a newer Slurm's) counts as
/// one whose processes may live and that has not ended: the cautious side both ways (no
/// pilot recovered while it may run, no pilots submitted beside it).
const STATES: [JobState; 24] = [
    state("PENDING", false, false),
    state("CONFIGURING", true, false),
    state("RUNNING", true, false),
    state("SUSPENDED", true, false),
    state("STOPPED", true, false),
    state("SIGNALING", true, false),
    state("STAGE_OUT", true, false),
    state("RESIZING", true, false),
    state("COMPLETING", true, false),
    // Requeued (`--requeue` after a node failure or preemption) or held: still to run, no
    // process now.
    state("REQUEUED", false, false),
    state("REQUEUE_FED", false, false),
    state("REQUEUE_HOLD", false, false),
    state("SPECIAL_EXIT", false, false),
    state("RESV_DEL_HOLD", false, false),
    // Ended: a requeued job shows PENDING again, under the same id.
    state("COMPLETED", false, true),
    state("CANCELLED", false, true),
    state("FAILED", false, true),
    state("TIMEOUT", false, true),
    state("NODE_FAIL", false, true),
    state("PREEMPTED", false, true),
    state("OUT_OF_MEMORY", false, true),
    state("BOOT_FAIL", false, true),
    state("DEADLINE", false, true),
    state("REVOKED", false, true),
];

fn find(name: &str) -> Option<&'static JobState> {
    STATES.iter().find(|s| s.name == name.trim())
}

/// Whether a job in state `name` may still have processes (see the table).
pub fn processes_may_live(name: &str) -> bool {
    find(name).is_none_or(|s| s.processes)
}

/// Whether a job in state `name` has ended: no run of it comes.
pub fn ended(name: &str) -> bool {
    find(name).is_some_and(|s| s.ended)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_state_once_and_unknown_ones_on_the_cautious_side() {
        for (i, s) in STATES.iter().enumerate() {
            assert!(!STATES[..i].iter().any(|t| t.name == s.name), "{}", s.name);
            assert!(!(s.processes && s.ended), "{}", s.name);
        }
        assert!(processes_may_live("RUNNING") && !ended("RUNNING"));
        assert!(processes_may_live("SUSPENDED") && !ended(" SUSPENDED\n"));
        assert!(!processes_may_live("PENDING") && !ended("PENDING"));
        assert!(!processes_may_live("REQUEUE_HOLD") && !ended("REQUEUE_HOLD"));
        assert!(!processes_may_live("NODE_FAIL") && ended("NODE_FAIL"));
        assert!(!processes_may_live("PREEMPTED") && ended("PREEMPTED"));
        assert!(processes_may_live("SOME_NEW_STATE") && !ended("SOME_NEW_STATE"));
    }
}
