// Package cli owns the command line both binaries share: their flags parsed
// into a flag set named after the binary, --version, the order of checking
// and running, and the exit codes (2 for a bad command line, 1 for a run
// that failed). Each binary's main only names itself and its options.
package cli
