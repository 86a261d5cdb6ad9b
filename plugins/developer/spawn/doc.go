// Package spawn starts the developer plugin's commands (seed 000 §4, §9, §11): one-shot
// commands for developer.run and developer.git, and long-lived processes for
// developer.start, developer.output and developer.stop. It is Linux only.
//
// Every command runs in an OS box (issue 14 §2; package sandbox): [Spec.Box] is its
// sandbox.Policy, and a Spec without one is refused ([ErrNoBox]) unless it says
// [Spec.Unboxed], which is for a command the owner approved as unboxed and never a fallback.
// A box that cannot be made or applied is an error wrapping sandbox.ErrUnavailable or a
// *sandbox.LaunchError, and nothing runs. The box is applied by a launcher that execs the
// program in place, so the pid, the process group and the identity below are the
// program's own (its pid on the host), boxed or not. A boxed program is the first process of
// its box's PID namespace: when it ends, everything else in the box ends with it. When a
// boxed command has ended, what it left in the workspace that git outside the box would obey
// has been quarantined, and [Result.Quarantine] / [Process.Quarantine] say what.
//
// What each part implements:
//
//   - [Env] and [Capture] (env.go) are §4's "an environment this plugin builds (PATH, HOME,
//     USER, LANG, LC_ALL, TERM, TMPDIR, SHELL, CI=1) and nothing of buddi's own — no
//     DATABASE_URL, no BUDDI_*, no key or token". The owner's values are inputs, read once
//     from an environ slice ("The PATH is captured once, from the owner's login shell, at
//     the moment they approve the workspace", §9); nothing is read from buddi's environment
//     behind the caller's back, and a nil environment spawns with an empty one.
//   - [Resolve] (resolve.go) is §4's "resolved to an absolute file on the workspace's
//     captured PATH". The seed names no other way to find a program, so only a bare name is
//     looked up: a program with a slash in it (./x, /bin/rm, node_modules/.bin/vite) is
//     refused, and a PATH entry that is not absolute (an empty entry means the current
//     directory) is never searched.
//   - [Run] (run.go) is developer.run: "There is no shell. The command is split into words
//     and spawned as a program and an argument vector" ([SpecFor] splits with
//     runlist.Split), "Output bounded (200 KB over both streams together, tail kept), exit
//     code, elapsed."
//   - [Start], [Alive], [Stop] and [Tail] (start.go, identity.go, stop.go, logtail.go) are
//     developer.start, developer.stop and developer.output: "spawned the same way down to
//     the program", and "A row is identified by its pid and its start time, so a recycled
//     pid after a reboot is a stale row rather than a signal sent to a stranger" (§4), the
//     start time being "when the operating system says that pid started" (§11).
//
// # Process groups and what is left behind
//
// Every command starts in a session and process group of its own (setsid), so it has no
// controlling terminal and cannot join buddi's group, with SIGKILL as its parent-death
// signal, so that a buddi that dies without stopping it (a crash, SIGKILL) takes it along (the
// command is forked on a thread locked to a goroutine that outlives it, since the kernel ties
// the signal to the forking thread). The group is what is stopped, and a boxed command's
// whole box with its first process:
//
//   - Run: when the command exits, anything it left running in its group is killed
//     (SIGKILL: the command is over). On a timeout or a cancelled context the group gets
//     SIGTERM, then SIGKILL once the grace has passed. A boxed first process that has no
//     handler for SIGTERM is spared it by the kernel (a namespace's first process is); it
//     gets SIGKILL as soon as the rest of its group has ended, which is what SIGTERM would
//     have done to it unboxed. Both happen while the command's own
//     process is still an unreaped zombie of ours, so the group id cannot have been given
//     to anybody else; it is reaped last.
//   - Start: the same when the process exits on its own, except that what it left behind
//     gets SIGTERM and the grace before SIGKILL.
//   - Stop: the identity is checked on a pidfd (pidfd_open, then the start time read from
//     /proc), and the group is signalled through that descriptor
//     (PIDFD_SIGNAL_PROCESS_GROUP), so a pid recycled between the check and the signal gets
//     nothing. On a kernel older than 6.9 the fallback is kill(-pgid) right after the check.
//     A boxed first process with no SIGTERM handler gets SIGKILL as in Run.
//
// Residuals, stated rather than implied: boxed, a process that leaves the group (setsid, a
// double fork) gets no SIGTERM of its own, only the SIGKILL that ends the box with its first
// process. Unboxed (a command the owner approved so), such a process is out of reach of all
// of the above; Run notices it only when it keeps the output pipe open
// ([Result.OutputHeld]). The row of a process whose buddi died is stale; the process itself
// died with buddi.
package spawn
