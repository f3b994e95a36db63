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

package chart

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
)

// The user guide's configuration file of koord-queue-controllers, as a
// values file gives it.
const controllersConfigValues = `extension:
  koord-queue-controllers:
    config:
      apiVersion: scheduling.k8s.io/v1
      kind: KoordQueueControllersConfiguration
      default:
        runningTimeout: 0s
        backoffTimeout: 30s
      extensions:
        tfjob:
          runningTimeout: 15m
    extraVolumes:
      - name: ctrl-extra
        emptyDir: {}
    extraVolumeMounts:
      - name: ctrl-extra
        mountPath: /var/ctrl-extra
controller:
  extraVolumes:
    - name: sched-extra
      configMap:
        name: my-files
  extraVolumeMounts:
    - name: sched-extra
      mountPath: /etc/sched-extra
      readOnly: true
`

// renderValues runs helm template with a values file.
func renderValues(t *testing.T, values string) *Rendered {
	t.Helper()
	file := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(file, []byte(values), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(helm(t), "template", "koord-queue", chartDir(), "--namespace", Namespace, "-f", file)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm template -f: %v\n%s", err, stderr.String())
	}
	return &Rendered{Raw: stdout.String(), Objects: parseObjects(t, stdout.String())}
}

// The guide tells to mount the controllers' configuration file: the chart
// renders it into a ConfigMap, mounts it read-only (the root filesystem is
// read-only) and passes --config; the file loads as the binary loads it.
func TestControllersConfigFile(t *testing.T) {
	r := renderValues(t, controllersConfigValues)
	d := r.deployment(t, "koord-queue-controllers")
	m := container(t, d, "manager")
	path, ok := flag(m.Args, "config")
	if !ok {
		t.Fatalf("koord-queue-controllers has no --config: %v", m.Args)
	}
	var mount *corev1.VolumeMount
	for i := range m.VolumeMounts {
		if vm := &m.VolumeMounts[i]; filepath.Join(vm.MountPath, "config.yaml") == path {
			mount = vm
		}
	}
	if mount == nil || !mount.ReadOnly {
		t.Fatalf("--config=%s is not config.yaml of a read-only mount: %+v", path, m.VolumeMounts)
	}
	var cmName string
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == mount.Name && v.ConfigMap != nil {
			cmName = v.ConfigMap.Name
		}
	}
	if cmName == "" {
		t.Fatalf("volume %s is not a ConfigMap: %+v", mount.Name, d.Spec.Template.Spec.Volumes)
	}
	if d.Spec.Template.Annotations["checksum/config"] == "" {
		t.Error("no checksum/config annotation: a changed file would not roll the pods")
	}
	cm := &corev1.ConfigMap{}
	r.Into(t, "ConfigMap", cmName, cm)
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(cm.Data["config.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	conf, err := configv1.LoadKoordQueueControllersConfiguration(file, []string{"job", "tfjob"})
	if err != nil {
		t.Fatalf("the controllers refuse the chart's file: %v\n%s", err, cm.Data["config.yaml"])
	}
	if running, backoff := conf.TimeoutsFor("tfjob"); running != 15*time.Minute || backoff != 30*time.Second {
		t.Errorf("tfjob timeouts %v/%v, want 15m/30s", running, backoff)
	}

	// Extra volumes of both Deployments.
	for _, tc := range []struct{ deploy, container, volume, path string }{
		{"koord-queue-controllers", "manager", "ctrl-extra", "/var/ctrl-extra"},
		{"koord-queue", "controller", "sched-extra", "/etc/sched-extra"},
	} {
		d := r.deployment(t, tc.deploy)
		found := false
		for _, v := range d.Spec.Template.Spec.Volumes {
			found = found || v.Name == tc.volume
		}
		mounted := false
		for _, vm := range container(t, d, tc.container).VolumeMounts {
			mounted = mounted || (vm.Name == tc.volume && vm.MountPath == tc.path)
		}
		if !found || !mounted {
			t.Errorf("%s: volume %s rendered %t, mounted at %s %t", tc.deploy, tc.volume, found, tc.path, mounted)
		}
	}

	// Without the value: no file, no flag.
	r = render(t)
	if _, ok := flag(container(t, r.deployment(t, "koord-queue-controllers"), "manager").Args, "config"); ok {
		t.Error("--config passed without extension.koord-queue-controllers.config")
	}
	if r.Find("ConfigMap", "koord-queue-controllers-config") != nil {
		t.Error("ConfigMap koord-queue-controllers-config rendered without the value")
	}
}
