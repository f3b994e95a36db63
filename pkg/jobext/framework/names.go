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

package framework

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxUnitNameLength is the longest object name the API server takes.
const MaxUnitNameLength = 253

// unitNameHashLength is how many hex digits of the hash end a cut name.
const unitNameHashLength = 10

// UnitName names the QueueUnit of a job: the job's name for a bare-named
// extension, else "<job>-<extension>". A name longer than the API allows is
// cut and ends with a hash of the full name, so distinct long names stay
// distinct.
func UnitName(ext *Extension, jobName string) string {
	name := jobName
	if !ext.BareUnitName {
		name = jobName + "-" + ext.Name
	}
	if len(name) <= MaxUnitNameLength {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	// A cut that ends in '-' or '.' would make an invalid name.
	cut := strings.TrimRight(name[:MaxUnitNameLength-unitNameHashLength-1], "-.")
	return cut + "-" + hex.EncodeToString(sum[:])[:unitNameHashLength]
}
