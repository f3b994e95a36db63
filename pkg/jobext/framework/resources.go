package framework

import (
	corev1 "k8s.io/api/core/v1"
)

// ContainerRequests is what one container asks for: its requests, with its
// limit standing in for every resource it limits but does not request.
func ContainerRequests(c *corev1.Container) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range c.Resources.Requests {
		out[name] = q.DeepCopy()
	}
	for name, q := range c.Resources.Limits {
		if _, ok := out[name]; !ok {
			out[name] = q.DeepCopy()
		}
	}
	return out
}

// PodRequests is the effective demand of one pod: its containers summed; its
// init containers maxed, where a sidecar (an init container that restarts
// always) keeps its share for the rest of the pod's life; its overhead added.
func PodRequests(spec *corev1.PodSpec) corev1.ResourceList {
	containers := corev1.ResourceList{}
	for i := range spec.Containers {
		addTo(containers, ContainerRequests(&spec.Containers[i]))
	}
	sidecars := corev1.ResourceList{}
	initPeak := corev1.ResourceList{}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		req := ContainerRequests(c)
		step := corev1.ResourceList{}
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addTo(sidecars, req)
			addTo(step, sidecars)
		} else {
			addTo(step, req)
			addTo(step, sidecars)
		}
		maxInto(initPeak, step)
	}
	total := corev1.ResourceList{}
	addTo(total, containers)
	addTo(total, sidecars)
	maxInto(total, initPeak)
	addTo(total, spec.Overhead)
	return total
}

// PodSetRequests is count times the pod set's effective pod demand.
func PodSetRequests(ps *PodSet) corev1.ResourceList {
	return Scale(PodRequests(&ps.Template.Spec), ps.Count)
}

// TotalRequests sums every pod set's demand.
func TotalRequests(sets []PodSet) corev1.ResourceList {
	total := corev1.ResourceList{}
	for i := range sets {
		addTo(total, PodSetRequests(&sets[i]))
	}
	return total
}

// Scale multiplies every quantity by n.
func Scale(list corev1.ResourceList, n int32) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range list {
		v := q.DeepCopy()
		v.Mul(int64(n))
		out[name] = v
	}
	return out
}

func addTo(into, add corev1.ResourceList) {
	for name, q := range add {
		cur := into[name]
		cur.Add(q)
		into[name] = cur
	}
}

func maxInto(into, other corev1.ResourceList) {
	for name, q := range other {
		if cur, ok := into[name]; !ok || q.Cmp(cur) > 0 {
			into[name] = q.DeepCopy()
		}
	}
}
