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

// Package resources computes what pods ask of quota: the effective requests of
// a pod template, shared by the scheduler and the job extensions so both count
// a pod the same way.
package resources

import (
	corev1 "k8s.io/api/core/v1"
)

// ContainerRequests is a container's requests, taking its limit where a
// request is missing (as the API server defaults them).
func ContainerRequests(c *corev1.Container) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range c.Resources.Limits {
		out[name] = q.DeepCopy()
	}
	for name, q := range c.Resources.Requests {
		out[name] = q.DeepCopy()
	}
	return out
}

// PodRequests is what one pod of spec asks for: its containers summed, each
// init container's peak (restartable sidecars keep running and are added),
// and the pod overhead.
func PodRequests(spec *corev1.PodSpec) corev1.ResourceList {
	total := corev1.ResourceList{}
	for i := range spec.Containers {
		add(total, ContainerRequests(&spec.Containers[i]))
	}
	// Init containers run one after another; sidecars (restartPolicy Always)
	// stay up beside everything that starts after them.
	initPeak := corev1.ResourceList{}
	sidecars := corev1.ResourceList{}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		req := ContainerRequests(c)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(sidecars, req)
			peakOf(initPeak, sidecars)
			continue
		}
		step := sidecars.DeepCopy()
		add(step, req)
		peakOf(initPeak, step)
	}
	add(total, sidecars)
	peakOf(total, initPeak)
	add(total, spec.Overhead)
	return total
}

// Scale returns list multiplied by n.
func Scale(list corev1.ResourceList, n int64) corev1.ResourceList {
	out := make(corev1.ResourceList, len(list))
	for name, q := range list {
		v := q.DeepCopy()
		if name == corev1.ResourceCPU {
			v.SetMilli(q.MilliValue() * n)
		} else {
			v.Set(q.Value() * n)
		}
		out[name] = v
	}
	return out
}

func add(into, more corev1.ResourceList) {
	for name, q := range more {
		v := into[name]
		v.Add(q)
		into[name] = v
	}
}

func peakOf(into, other corev1.ResourceList) {
	for name, q := range other {
		if v, ok := into[name]; !ok || q.Cmp(v) > 0 {
			into[name] = q.DeepCopy()
		}
	}
}
