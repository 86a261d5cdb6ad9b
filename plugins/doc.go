// Package plugins is the plugin contract: the Go types a plugin fills in to contribute tools,
// sources, sentinels, suggested missions and view descriptors, and that core reads. It is a
// small leaf: it imports only the permission vocabulary (effects and tiers) and the standard
// library. Plugins live in subdirectories (plugins/developer, …) and import core; core imports
// this package and never a plugin.
package plugins
