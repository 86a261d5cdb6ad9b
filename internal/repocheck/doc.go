// Package repocheck holds tests over the whole repository's source: every package has a
// doc comment and every exported name says what it is.
package repocheck
