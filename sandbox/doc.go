// Package sandbox is the OS box every process the developer plugin spawns runs in (issue 14
// §2): developer.run, developer.start and developer.git. The code an agent runs (a test
// runner, a script it wrote, a dev server) gets the owner's programs and files to read and
// the workspace to write, and nothing of buddi's: not its data directory, not its process.
// It is Linux only and imports no buddi package.
//
// # How a command is boxed
//
// [Start] is used in place of exec.Cmd.Start. It does not start the program: it starts this
// same binary again (/proc/self/exe) in a new mount namespace and a new IPC namespace (and,
// for an account that is not root, a user namespace mapping only its own uid and gid, in
// which the launcher holds CAP_SYS_ADMIN and CAP_SETPCAP as ambient capabilities until it
// drops them), with the launch — the [Policy], the program, its argv, environment and
// directory — as the one variable of its environment.
// This package's init notices that variable before anything else of the binary runs, and the
// process becomes the launcher: it applies the box to its own thread and execve's the
// program there, so the program's pid is the launcher's. buddi's binary and every test
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
//     mounted back in. <workspace>/.git (unless [Policy.GitWritable]) and
//     [Policy.ReadOnly] are mounted read-only. [Policy.Home] is covered by an empty
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
//   - A path named by ReadOnly, or .git, that does not exist when the command starts can be
//     created by it: Landlock grants by hierarchy, not by name, and a read-only mount needs
//     something to mount on.
//   - A hard link already present in a writable place to a file under Home would be
//     readable; nothing in the box can make one (Home is not there to link from).
//   - Directories that are ancestors of Home can be listed (names, not content); new entries
//     created in them after the box was made are not readable in it.
//   - A file system mounted inside the workspace or a cache stays read-only in the box.
//   - developer.git in a linked worktree or a submodule, whose git directory lies outside the
//     workspace, cannot write that directory unless the caller lists it in Writable.
//   - For an account that is not root the box is a user namespace mapping only that account:
//     files of other accounts show as owned by nobody, and setgroups is refused.
//   - Other processes are visible (there is no pid namespace): their command lines and
//     status in /proc can be read, though not their environment, memory or descriptors.
//   - The kernel keyrings of the owner's account are not restricted.
//   - Nothing in the box limits memory, processes or time; the caller's timeout does.
//
// Residual of nesting: a box cannot be made from inside a box (Landlock refuses mounts to a
// restricted process), so Check reports unavailable there.
package sandbox
