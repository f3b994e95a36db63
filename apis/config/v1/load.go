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

package v1

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"

	"sigs.k8s.io/yaml"
)

// LoadKoordQueueConfiguration reads, defaults and validates a scheduler
// configuration file. An empty path gives the defaults.
func LoadKoordQueueConfiguration(path string) (*KoordQueueConfiguration, error) {
	c := &KoordQueueConfiguration{}
	if path != "" {
		if err := readStrict(path, c); err != nil {
			return nil, err
		}
	}
	c.SetDefaults()
	if err := c.Validate(); err != nil {
		if path == "" {
			return nil, fmt.Errorf("invalid default %s: %w", KindKoordQueueConfiguration, err)
		}
		return nil, fmt.Errorf("invalid %s in %s: %w", KindKoordQueueConfiguration, path, err)
	}
	return c, nil
}

// LoadKoordQueueControllersConfiguration reads, defaults and validates the
// job extensions' configuration file. An empty path gives the defaults.
func LoadKoordQueueControllersConfiguration(path string, knownExtensions []string) (*KoordQueueControllersConfiguration, error) {
	c := &KoordQueueControllersConfiguration{}
	if path != "" {
		if err := readStrict(path, c); err != nil {
			return nil, err
		}
	}
	c.SetDefaults()
	if err := c.Validate(knownExtensions); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

func readStrict(path string, into any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		return fmt.Errorf("parse config %s: %w", path, err)
	}
	return nil
}

// DecodeElasticQuotaArgs reads the ElasticQuotaV2 plugin's arguments
// strictly and validates them; it leaves unset fields unset (SetDefaults
// fills them). Empty arguments set nothing.
func DecodeElasticQuotaArgs(raw []byte) (*ElasticQuotaArgs, error) {
	args := &ElasticQuotaArgs{}
	if len(raw) == 0 {
		return args, nil
	}
	if err := yaml.UnmarshalStrict(raw, args); err != nil {
		if name := fieldAtFault[ElasticQuotaArgs](raw); name != "" {
			return nil, fmt.Errorf("pluginConfigs args of %s: %s: %w", PluginElasticQuotaV2, name, err)
		}
		return nil, fmt.Errorf("pluginConfigs args of %s: %w", PluginElasticQuotaV2, err)
	}
	if err := args.Validate(); err != nil {
		return nil, fmt.Errorf("pluginConfigs args of %s: %w", PluginElasticQuotaV2, err)
	}
	return args, nil
}

// fieldAtFault names the first field of raw (by name) that does not decode
// into a T on its own, for errors that do not name it (such as a duration
// that does not parse); "" when none is found.
func fieldAtFault[T any](raw []byte) string {
	var fields map[string]json.RawMessage
	if err := yaml.Unmarshal(raw, &fields); err != nil {
		return ""
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		one, err := json.Marshal(map[string]json.RawMessage{name: fields[name]})
		if err != nil {
			return name
		}
		if err := yaml.UnmarshalStrict(one, new(T)); err != nil {
			return name
		}
	}
	return ""
}
