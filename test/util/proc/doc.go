/*
Copyright 2026 The Koordinator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package proc is the one way the test programs under test/ run a child
// process and pick loopback ports: start a binary with its output in a log
// file, see whether and how it exited, stop it (SIGTERM, then SIGKILL after
// a grace), stop a process another program started by its PID, and find
// ports nobody listens on.
//
// It owns no state beyond the processes it starts; callers own the log
// files' folders and any record of PIDs.
package proc
