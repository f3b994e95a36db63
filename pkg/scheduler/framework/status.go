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

import "github.com/koordinator-sh/koord-queue/pkg/schedtypes"

// Code is the outcome of a plugin call.
type Code int

const (
	// Success lets the unit go on.
	Success Code = iota
	// Unschedulable means not now; the unit waits for something to change.
	Unschedulable
	// UnschedulableAndUnresolvable means never, whatever changes in usage.
	UnschedulableAndUnresolvable
	// Error is a failure of the plugin itself.
	Error
)

// Status is a plugin's answer. A nil Status is Success.
type Status struct {
	Code Code
	// Reason is what the unit waits for, equal for the same cause (a status
	// is written and recorded only when it changes); Message is for people.
	Reason  schedtypes.Reason
	Message string
}

// NewStatus builds a status.
func NewStatus(code Code, reason schedtypes.Reason, message string) *Status {
	return &Status{Code: code, Reason: reason, Message: message}
}

// IsSuccess reports whether s lets the unit go on.
func (s *Status) IsSuccess() bool { return s == nil || s.Code == Success }
