// Package confine keeps the developer plugin's file access inside one workspace directory
// (seed 000 §2 and §9). It is Linux only.
//
// A [Root] is one workspace: an absolute directory, the owner's home and any further
// protected paths (buddi's data directory, the vault). Every path a tool is given, relative
// to the workspace or to a cwd inside it, is resolved by [Root.Resolve]: walked one
// component at a time from the root, with any symbolic link refused, whatever it points at
// ("a link is a way out whatever it points at today"), `..` allowed only while it stays
// beneath the root, and the protected home paths refused even when the workspace is placed
// above them.
//
// # How a path is resolved and opened
//
// Validation is a component walk from a descriptor of the root: each component is looked
// at with fstatat(AT_SYMLINK_NOFOLLOW), so the error can name the component that is a link
// or a file, and each directory is entered with openat(O_PATH|O_DIRECTORY|O_NOFOLLOW), so
// the walk never follows anything. It records the (dev, ino) of what it found.
//
// The open that follows is done again from the root descriptor, never from a path string.
// The choice: openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS) when the
// kernel has it (Linux 5.6 and later), because then the kernel itself refuses a link
// anywhere in the path, and a climb out of the root, in the same system call that opens
// the file. The fallback, when a probe of openat2 fails (ENOSYS on an old kernel, EPERM
// under a seccomp filter that does not know the call), repeats the component walk, each
// directory with openat(O_NOFOLLOW|O_DIRECTORY) from the previous one's descriptor, with
// O_NOFOLLOW on the final open: slower, and just as strict. Either way the descriptor's
// (dev, ino) is then compared with what validation recorded. A path changed between the
// check and the open is refused with a [SwappedError] before a byte is read: a link
// swapped in is already refused by the open (ELOOP, ENOTDIR), and a swap with no link in it
// (a directory replaced by another directory) is caught by the (dev, ino) comparison. What
// is left is the seed's residual: the window between that confirmation and the read or
// write on the descriptor.
//
// Writes ([Root.Write]) go to a temporary file created in the target's directory through
// that directory's descriptor, are synced, and are renamed over the target with renameat
// on the same descriptor, which never follows a link at the destination. `.git` is never
// written, and neither is a directory git runs hooks from ([HooksDirError]): any `.husky`,
// and, for a Root made with [Root.WithHooks], the directory the nearest repository's
// core.hooksPath names, as a lookup the plugin gives (the owner's own git) reports it.
// `.gitmodules`, `.gitattributes` and the files hook managers read their commands from
// (lefthook.yml, .pre-commit-config.yaml, …) are reported ([Path.NeedsGate]) so the plugin
// can gate them in every mode.
//
// [Root.Walk] lists a tree for developer.list and developer.search: it steps over symbolic
// links and protected paths, counts what it skipped, and is bounded in entries and depth.
// [Root.IsRepository] and [Root.EnclosingRepository] are what the git tools need to refuse
// in a workspace that is a folder of several projects.
//
// Errors that are refusals ([OutsideError], [SymlinkError], [ProtectedError],
// [SwappedError], [GitDirError], [HooksDirError], [NotDirError], [NotRegularError]) read as one plain
// sentence; [IsRefusal] tells them from faults of the machine.
package confine
