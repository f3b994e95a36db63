//go:build chaosmutation

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

package mutation

import (
	"os"
	"sync/atomic"
)

var (
	planted = Mutation(os.Getenv(EnvVar))
	chances atomic.Int64
)

// On reports whether m is the bug this process plants.
func On(m Mutation) bool { return m != "" && planted == m }

// Strikes reports whether m strikes at this chance: once in Every.
func Strikes(m Mutation) bool { return On(m) && chances.Add(1)%Every == 0 }
