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

package harness

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// The cause of a peak RSS no run explained: the rusage of an exited child
// counts its parent's peak (Go starts children on the parent's memory map
// until exec), while VmHWM read until the child exits counts the child
// alone.
func TestRusageCountsTheParent(t *testing.T) {
	const held = 256 << 20
	ballast := make([]byte, held)
	for i := 0; i < len(ballast); i += 4096 {
		ballast[i] = 1
	}
	cmd := exec.Command("sleep", "0.5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	peak := SampleRSS(t.Context(), cmd.Process.Pid, 10*time.Millisecond)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-peak.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("sampling did not stop after the process exited")
	}
	sampled, n := peak.Peak()
	if n == 0 {
		t.Fatal("no sample taken of a process that ran 0.5 s")
	}
	rusage := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
	t.Logf("sleep: rusage %d MiB, VmHWM %d MiB over %d samples; the parent holds %d MiB",
		rusage>>20, sampled>>20, n, held>>20)
	if rusage < held {
		t.Errorf("rusage gives %d MiB, less than the %d MiB the parent held: the cause is not this", rusage>>20, held>>20)
	}
	if sampled <= 0 || sampled > 64<<20 {
		t.Errorf("VmHWM of sleep: %d MiB, want a few", sampled>>20)
	}
	ballast[0] = 2 // held until here
}

// Sampling stops by itself when the process is gone.
func TestSampleRSSOfAGoneProcess(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	peak := SampleRSS(ctx, cmd.Process.Pid, time.Millisecond)
	<-peak.Done()
	if ctx.Err() != nil {
		t.Fatal("sampling a process that had exited did not stop on its own")
	}
	if _, n := peak.Peak(); n != 0 {
		t.Errorf("%d samples of a process that had exited", n)
	}
}
