// Package version is buddi's version, set at build time with
// -ldflags "-X buddi/version.Version=…".
package version

// Version is the release this binary was built from.
var Version = "0.1.0-dev"
