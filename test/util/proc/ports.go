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

package proc

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// The kernel hands out ports of its ephemeral range (ip_local_port_range)
// to every outgoing connection. A port picked there and bound a moment
// later can be taken meanwhile by a connection of anything on the machine,
// and on a busy machine it was ("bind: address already in use"). So ports
// are picked below that range, where only explicit binds go.
const (
	lowestPort = 10000
	// defaultEphemeralLow is Linux's default when the range cannot be read.
	defaultEphemeralLow = 32768
)

// FreePorts picks n distinct loopback ports nobody listens on right now,
// outside the kernel's ephemeral range.
func FreePorts(n int) ([]int, error) {
	high := ephemeralLow()
	if high-lowestPort < 10*n {
		return nil, fmt.Errorf("find %d free ports: the ephemeral range starts at %d, too low", n, high)
	}
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	out := make([]int, 0, n)
	for tries := 0; len(out) < n; tries++ {
		if tries > 1000 {
			return nil, fmt.Errorf("find %d free ports below %d: %d found in %d tries", n, high, len(out), tries)
		}
		port := lowestPort + rand.IntN(high-lowestPort)
		// Listening proves the port free; each stays open until all are
		// picked, so none repeats.
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		held = append(held, l)
		out = append(out, port)
	}
	return out, nil
}

// ephemeralLow is the first port of the kernel's ephemeral range.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return defaultEphemeralLow
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return defaultEphemeralLow
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil || low <= lowestPort {
		return defaultEphemeralLow
	}
	return low
}

// FreePort picks one loopback port nobody listens on right now.
func FreePort() (int, error) {
	p, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}
