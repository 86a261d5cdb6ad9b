// Package sandbox is the OS box every process the developer plugin spawns runs in (issue 14
// §2): developer.run, developer.start and developer.git, and the headless browser of
// developer.screenshot. The code an agent runs (a test
// runner, a script it wrote, a dev server) gets the owner's programs and files to read and
// the workspace to write, and nothing of buddi's: not its data directory, not its process.
// It is Linux only and imports no buddi package.
//
// # How a command is boxed
//
// [Launch] is used in place of exec.Cmd.Start, and its result's Finish once the command has
// ended ([Start] finishes by itself, for a caller that reads no report; [Prepare] rewrites a
// command that another package starts itself, such as the screenshot tool's Chromium with its
// DevTools pipe). It does not start the program: it
// starts this same binary again (/proc/self/exe) in a new mount namespace, a new IPC
// namespace and a new PID namespace (and, for an account that is not root, a user namespace
// mapping only its own uid and gid, in which the launcher holds CAP_SYS_ADMIN and
// CAP_SETPCAP as ambient capabilities until it drops them), with the launch — the [Policy],
// the program, its argv, environment and directory, the git places to keep read-only — as
// the one variable of its environment.
// This package's init notices that variable before anything else of the binary runs, and the
// process becomes the launcher: it applies the box to its own thread and execve's the
// program there, so the program's pid is the launcher's, and the program is the first
// process of the box's PID namespace: when it exits or is killed, the kernel kills every
// other process in the box, one that left its process group or session (setsid, a double
// fork) included, before the program can be waited for. Being that first process, it is
// not sent a signal it has no handler for, SIGKILL from outside apart: its caller (package
// spawn) sends SIGKILL at once where a SIGTERM was so dropped. buddi's binary and every test
// binary that links this package are their own launchers, with nothing to install.
//
// The box, as the launcher makes it (the paths it mounts back in or grants writing to are
// opened and checked once, before anything else, and used by descriptor from then on):
//
//  1. Mounts, seen only inside the box. Mount events stop propagating. Every mount is made
//     read-only, so that outside the writable places nothing can be written, nor have its
//     mode, owner, times or extended attributes changed (Landlock does not govern those);
//     the workspace and [Policy.Writable] are mounted again, writable. /tmp, /var/tmp,
//     /dev/shm and /run each get an empty writable tmpfs of their own: temporary files stay
//     in the box, and the sockets other programs keep there cannot be reached (a terminal
//     multiplexer's, an SSH agent's, the X server's, the session and system D-Bus, systemd's,
//     a container engine's; any of them would run code outside the box). The policy's paths
//     under one of them, the program's file and the file /etc/resolv.conf leads to are
//     mounted back in. /proc is a new one, of the box's PID namespace alone (read-only, but
//     for [Policy.Namespaces]): no other process is there to read, not even its command
//     line. The git places (below) and [Policy.ReadOnly] are mounted read-only.
//     [Policy.Home] is covered by an empty
//     read-only tmpfs: the vault, the CLI token, the database socket, the logs and the other
//     agents' process logs are not there. So is each directory of [Policy.Hidden] (the
//     owner's ~/.ssh, say), and each file of it is covered by a read-only /dev/null.
//  2. Landlock (ABI 6 or later), every file system right the kernel knows handled: read,
//     list and execute everywhere except under Home, Hidden and /dev (the rule goes on each
//     entry along the way to them, and the directories on the way may only be listed); all but
//     making device nodes in the workspace, [Policy.Writable] and the private directories;
//     /dev/null, /dev/zero, /dev/full, /dev/tty read and write, /dev/random and
//     /dev/urandom read; the command's stdout and stderr when they are files (so a script may
//     open /dev/stdout). Signals and abstract unix sockets are scoped to the box, so it
//     cannot signal buddi or any process outside the box, nor reach an abstract socket
//     outside it. Landlock also refuses ptrace of a process outside the domain, and with it
//     /proc/<pid>/environ, mem, fd, cwd and root of buddi and of every other process outside
//     the box. When the kernel can restrict connecting to unix sockets by path, that right
//     is handled too and granted only where writing is.
//  3. Descriptors: every descriptor above the caller's own (0, 1, 2, ExtraFiles) becomes
//     close-on-exec, so one buddi leaked without the flag does not reach the program.
//  4. Privileges: no_new_privs; the secure bits locked (root gets nothing from an exec, no
//     ambient raise); the bounding, ambient, effective, permitted and inheritable capability
//     sets emptied. Root in the box is a uid 0 that cannot undo a mount or pass a permission
//     check by capability, and nothing exec'd in it (a set-user-ID program included) gains
//     a privilege.
//
// Then the launcher execs the program. Every step fails closed: a launcher that cannot
// finish one exits with [ExitLaunchFailed] and one line on a close-on-exec status pipe,
// which Start returns as a [*LaunchError]; the program is never exec'd outside the box.
// [Check] says once per process whether a box can be made at all, by trying one; when it
// cannot, Start returns its [*UnavailableError] and runs nothing.
//
// # Git places
//
// git, run in the workspace by the owner outside any box (a shell prompt, an editor, a plain
// `git status`), obeys what it finds there: a repository's config names programs to run
// (core.fsmonitor, hooks, filter drivers, core.worktree pointing it anywhere). So every
// place git would take for a repository is guarded:
//
//   - <workspace>/.git is read-only in the box unless [Policy.GitWritable]. When the
//     workspace has none, Launch makes it, an empty directory (empty, it is no repository to
//     git), so that it can be mounted read-only and no repository made there; it is shared
//     by the workspace's boxes in this process, and the last of them to end removes it if it
//     is still empty (one git init made meanwhile, by developer.git or the owner, is kept).
//   - Before the launcher starts, the workspace is scanned (getdents only, every directory,
//     node_modules included, no link followed, openat2 beneath the workspace, its own file
//     system only) for each entry named .git (a directory, a file, a link) and each
//     directory laid out as a git directory (HEAD, objects and refs: a bare repository). Each
//     is mounted read-only in the box, and so is the git directory a .git file or link leads
//     to (and a linked worktree's common directory) when it lies in a writable place.
//   - When the box ends ([Launched.Finish]) the workspace is scanned again, and each place
//     that was not there, the same file, before is quarantined without following a link:
//     renamed with ".quarantined-by-buddi-<time>" added (a bare repository's HEAD is renamed
//     so), as is a [Policy.ReadOnly] path (a hooks directory) that was missing then and is
//     there now. The [Report] says what was moved, and what could not be looked at.
//
// A scan reads about 110,000 entries (100,000 files) in 160 ms on the project's 2-core
// machine; it stops after 2,000,000 entries, and the report then says the rest was not
// looked at.
//
// # What the box does not do
//
//   - The network is open: package installs need it. A boxed process can reach any TCP or
//     UDP port, buddi's dashboard on loopback among them; the dashboard's own credentials
//     are what stops it there.
//   - It reads what the owner can read outside Home, Hidden and /dev: their other projects,
//     and whatever secrets of theirs the caller did not list in Hidden (a browser profile,
//     a token file of some tool).
//   - A unix socket elsewhere than the private directories and Home (a socket in the owner's
//     home, e.g. ~/.gnupg/S.gpg-agent) can be connected to, until the kernel has Landlock's
//     control of unix socket paths. Abstract sockets outside the box cannot.
//   - A ReadOnly path that does not exist when the command starts can be created by it
//     (Landlock grants by hierarchy, not by name, and a read-only mount needs something to
//     mount on); it is quarantined when the box ends, not before. Likewise a repository a
//     boxed command makes is live until its box ends: git run in that directory meanwhile
//     (a long-lived developer.start process's box may last hours) obeys it.
//   - A box that ends with buddi killed (SIGKILL, a crash) is not scanned at its end: what it
//     left stays, and the next box of the workspace takes it for the owner's.
//   - A hard link already present in a writable place to a file under Home would be
//     readable; nothing in the box can make one (Home is not there to link from).
//   - Directories that are ancestors of Home can be listed (names, not content); new entries
//     created in them after the box was made are not readable in it.
//   - A file system mounted inside the workspace or a cache stays read-only in the box.
//   - developer.git in a linked worktree or a submodule, whose git directory lies outside the
//     workspace, cannot write that directory unless the caller lists it in Writable.
//   - For an account that is not root the box is a user namespace mapping only that account:
//     files of other accounts show as owned by nobody, and setgroups is refused.
//   - The box's first process is not reaped of orphans it does not wait for: zombies of the
//     box stay until it ends. Nothing limits how many processes it makes.
//   - The kernel keyrings of the owner's account are not restricted.
//   - Nothing in the box limits memory, processes or time (there is no cgroup); the caller's
//     timeout does.
//   - With [Policy.Namespaces] (the screenshot's browser, for an account that is not root),
//     the program may make user namespaces of its own and write its own /proc entries.
//
// Residual of nesting: a box cannot be made from inside a box (Landlock refuses mounts to a
// restricted process), so Check reports unavailable there.
package sandbox
