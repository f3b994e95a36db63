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

package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/koordinator-sh/koord-queue/pkg/version"
)

// BuildInfoName is the gauge both binaries export: 1, labelled with the build.
const BuildInfoName = "koord_queue_build_info"

// NewBuildInfo returns the koord_queue_build_info gauge of a build.
func NewBuildInfo(info version.Info) prometheus.Collector {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: BuildInfoName,
		Help: "Always 1; the labels name the running build (version, revision, Go version).",
	}, []string{"version", "revision", "goversion"})
	g.WithLabelValues(info.Version, info.Revision, info.GoVersion).Set(1)
	return g
}

// RegisterBuildInfo exposes the running binary's koord_queue_build_info on
// reg. A registry that has it already is left as it is.
func RegisterBuildInfo(reg prometheus.Registerer) error {
	err := reg.Register(NewBuildInfo(version.Get()))
	if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) {
		return nil
	}
	return err
}
