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

package visibility

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
)

// The OpenAPI documents. kube-apiserver's aggregator fetches /openapi/v3 (the
// list of group versions) and, when that is missing, /openapi/v2, which it
// merges into its own /openapi/v2; clients such as `kubectl explain` then
// fetch /openapi/v3/apis/<group>/<version>, which the aggregator proxies here.
const (
	openAPIV2Path = "/openapi/v2"
	openAPIV3Path = "/openapi/v3"
	// openAPIV3GV is the key of this group version in the v3 discovery.
	openAPIV3GV = "apis/" + visibilityv1alpha1.GroupName + "/v1alpha1"
	// defPrefix names our schemas, apart from the cluster's own.
	defPrefix = "io.k8s.koord-queue.visibility.v1alpha1."
)

// openAPIDocs are the documents, built once.
type openAPIDocs struct {
	v2, v3, v3Root []byte
	v2ETag         string
}

func buildOpenAPI() (*openAPIDocs, error) {
	v2 := map[string]any{
		"swagger": "2.0",
		"info":    map[string]any{"title": "koord-queue visibility API", "version": gv.Version},
		"paths":   paths(v2Operation),
		"definitions": definitions(func(name string) string {
			return "#/definitions/" + defPrefix + name
		}),
	}
	v3 := map[string]any{
		"openapi": "3.0.0",
		"info":    map[string]any{"title": "koord-queue visibility API", "version": gv.Version},
		"paths":   paths(v3Operation),
		"components": map[string]any{"schemas": definitions(func(name string) string {
			return "#/components/schemas/" + defPrefix + name
		})},
	}
	d := &openAPIDocs{}
	var err error
	if d.v2, err = json.Marshal(v2); err != nil {
		return nil, err
	}
	if d.v3, err = json.Marshal(v3); err != nil {
		return nil, err
	}
	d.v2ETag = fmt.Sprintf("%q", fmt.Sprintf("%X", sha512.Sum512(d.v2)))
	root := map[string]any{"paths": map[string]any{openAPIV3GV: map[string]any{
		"serverRelativeURL": fmt.Sprintf("%s/%s?hash=%X", openAPIV3Path, openAPIV3GV, sha512.Sum512(d.v3)),
	}}}
	if d.v3Root, err = json.Marshal(root); err != nil {
		return nil, err
	}
	return d, nil
}

func registerOpenAPI(mux *http.ServeMux) {
	docs, err := buildOpenAPI()
	if err != nil {
		// The documents are constants in code: a failure is a bug.
		panic(fmt.Sprintf("build OpenAPI documents: %v", err))
	}
	mux.HandleFunc("GET "+openAPIV2Path, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == docs.v2ETag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", docs.v2ETag)
		writeDoc(w, r, docs.v2)
	})
	mux.HandleFunc("GET "+openAPIV3Path, func(w http.ResponseWriter, r *http.Request) { writeDoc(w, r, docs.v3Root) })
	mux.HandleFunc("GET "+openAPIV3Path+"/"+openAPIV3GV, func(w http.ResponseWriter, r *http.Request) { writeDoc(w, r, docs.v3) })
}

// writeDoc answers JSON to a client that accepts it; the documents exist in
// no other encoding.
func writeDoc(w http.ResponseWriter, r *http.Request, doc []byte) {
	accept := r.Header.Get("Accept")
	if accept != "" && !strings.Contains(accept, "json") && !strings.Contains(accept, "*/*") && !strings.Contains(accept, "application/*") {
		http.Error(w, "only application/json is served", http.StatusNotAcceptable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(doc)
}

type operationFunc func(id, description string, params []param, schema string) map[string]any

type param struct {
	name, in, typ, description string
}

// paths lists the served operations, in the shape op gives (v2 or v3).
func paths(op operationFunc) map[string]any {
	unitsParams := []param{
		{"name", "path", "string", "Name of the queue or quota."},
		{"limit", "query", "integer", "At most this many units (default 1000, 0 for all)."},
		{"offset", "query", "integer", "Skip this many units from the start."},
		{"phase", "query", "string", "Enqueued (default: pending units in scheduling order), Reserved, Dequeued or Running."},
		{"includeObject", "query", "string", "With Table output: None, Metadata (default) or Object."},
	}
	out := map[string]any{
		versionURL + "/" + visibilityv1alpha1.ResourceFeatureGates: map[string]any{"get": op("readFeatureGates",
			"The feature gates the koord-queue scheduler runs with.", nil, "FeatureGates")},
	}
	quotas := versionURL + "/" + visibilityv1alpha1.ResourceQuotas
	tableParam := param{"includeObject", "query", "string", "With Table output: None, Metadata (default) or Object."}
	out[quotas] = map[string]any{"get": op("listQuotas", "Every quota of the scheduler's quota tree with its usage.",
		[]param{tableParam}, "QuotaList")}
	out[quotas+"/{name}"] = map[string]any{"get": op("readQuota", "One quota of the scheduler's quota tree with its usage.",
		[]param{{"name", "path", "string", "Name of the quota."}, tableParam}, "Quota")}
	for _, r := range []string{visibilityv1alpha1.ResourceQueues, visibilityv1alpha1.ResourceElasticQuotas} {
		title := strings.ToUpper(r[:1]) + r[1:]
		desc := "The units of a " + strings.TrimSuffix(r, "s") + " in one phase, pending ones in scheduling order with their position."
		out[versionURL+"/"+r+"/{name}/"+visibilityv1alpha1.SubresourceQueueUnits] = map[string]any{"get": op(
			"read"+title+"QueueUnits", desc, unitsParams, "QueueUnitsSummary")}
		out[versionURL+"/"+r+"/{name}"] = map[string]any{"get": op("read"+title, desc, unitsParams, "QueueUnitsSummary")}
	}
	return out
}

func gvk(kind string) []any {
	return []any{map[string]any{"group": gv.Group, "version": gv.Version, "kind": kind}}
}

func v2Operation(id, description string, params []param, schema string) map[string]any {
	ps := []any{}
	for _, p := range params {
		ps = append(ps, map[string]any{"name": p.name, "in": p.in, "type": p.typ, "description": p.description, "required": p.in == "path"})
	}
	return map[string]any{
		"operationId": id, "description": description, "parameters": ps,
		"produces": []string{"application/json"}, "schemes": []string{"https"},
		"x-kubernetes-action":             "get",
		"x-kubernetes-group-version-kind": gvk(schema)[0],
		"responses": map[string]any{
			"200": map[string]any{"description": "OK", "schema": map[string]any{"$ref": "#/definitions/" + defPrefix + schema}},
			"401": map[string]any{"description": "Unauthorized"},
		},
	}
}

func v3Operation(id, description string, params []param, schema string) map[string]any {
	ps := []any{}
	for _, p := range params {
		ps = append(ps, map[string]any{"name": p.name, "in": p.in, "description": p.description, "required": p.in == "path",
			"schema": map[string]any{"type": p.typ}})
	}
	return map[string]any{
		"operationId": id, "description": description, "parameters": ps,
		"x-kubernetes-action":             "get",
		"x-kubernetes-group-version-kind": gvk(schema)[0],
		"responses": map[string]any{
			"200": map[string]any{"description": "OK", "content": map[string]any{"application/json": map[string]any{
				"schema": map[string]any{"$ref": "#/components/schemas/" + defPrefix + schema}}}},
			"401": map[string]any{"description": "Unauthorized"},
		},
	}
}

// definitions are the schemas of the answers; ref names a schema.
func definitions(ref func(name string) string) map[string]any {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	integer := func(desc string) map[string]any {
		return map[string]any{"type": "integer", "format": "int32", "description": desc}
	}
	typeMeta := func(props map[string]any) map[string]any {
		props["apiVersion"] = str("APIVersion is visibility.koord-queue.x-k8s.io/v1alpha1.")
		props["kind"] = str("Kind of the answer.")
		return props
	}
	// The answers are computed, never stored: their list metadata is empty.
	listMeta := map[string]any{"type": "object", "description": "Standard list metadata, empty: the answer is computed, not stored."}
	quantities := func(desc string) map[string]any {
		return map[string]any{"type": "object", "description": desc,
			"additionalProperties": map[string]any{"type": "string", "description": "A quantity, such as 500m or 8Gi."}}
	}
	quantity := func(desc string) map[string]any {
		return map[string]any{"type": "string", "description": desc + " A quantity, such as 500m or 8Gi."}
	}
	return map[string]any{
		defPrefix + "QueueUnitsSummary": map[string]any{
			"type":        "object",
			"description": "QueueUnitsSummary lists the units of a queue or a quota in one phase.",
			"required":    []string{"phase", "total", "items"},
			"properties": typeMeta(map[string]any{
				"metadata": listMeta,
				"phase":    str("Phase the items are in."),
				"total":    integer("Total counts every unit in phase the caller may see, before offset and limit."),
				"offset":   integer("Offset is how many units were skipped from the start."),
				"items": map[string]any{"type": "array", "description": "Items are the units from offset on; pending units in scheduling order.",
					"items": map[string]any{"$ref": ref("QueueUnitSummary")}},
			}),
			"x-kubernetes-group-version-kind": gvk("QueueUnitsSummary"),
		},
		defPrefix + "QueueUnitSummary": map[string]any{
			"type":        "object",
			"description": "QueueUnitSummary is one QueueUnit as the scheduler sees it.",
			"required":    []string{"metadata", "phase", "queue", "priority", "positionInQueue"},
			"properties": map[string]any{
				"metadata":        map[string]any{"$ref": ref("UnitMetadata"), "description": "Name, namespace and creation time of the QueueUnit."},
				"phase":           str("The unit's phase."),
				"queue":           str("The queue the unit waits in (or was admitted from)."),
				"quota":           str("The ElasticQuota the unit is charged to."),
				"priority":        integer("Priority inside the queue."),
				"positionInQueue": integer("Position counted from 1 over every unit of the queue; 0 for units that no longer wait."),
				"request":         quantities("What the unit asks for in all."),
				"reason":          str("The kind of wait: the reason of the unit's QuotaReserved=False condition, e.g. InsufficientQuota."),
				"message":         str("Why the unit waits, for people (the unit's status.message)."),
			},
		},
		defPrefix + "UnitMetadata": map[string]any{
			"type":        "object",
			"description": "UnitMetadata identifies a QueueUnit.",
			"properties": map[string]any{
				"name":              str("Name of the QueueUnit."),
				"namespace":         str("Namespace of the QueueUnit."),
				"creationTimestamp": map[string]any{"type": "string", "format": "date-time", "description": "When the QueueUnit was created."},
			},
		},
		defPrefix + "Quota": map[string]any{
			"type":        "object",
			"description": "Quota is one quota of the scheduler's quota tree (an ElasticQuota, by name) with its usage.",
			"required":    []string{"resources", "pendingUnits", "admittedUnits"},
			"properties": typeMeta(map[string]any{
				"metadata":       map[string]any{"$ref": ref("QuotaMetadata"), "description": "The quota's name."},
				"parent":         str("The parent quota's name."),
				"isParent":       map[string]any{"type": "boolean", "description": "True for a quota with children or marked is-parent: no unit is admitted to it."},
				"quotaNamespace": str("Namespace of the ElasticQuota; empty for a placeholder."),
				"resources": map[string]any{"type": "array", "description": "Every resource the quota names, holds or is asked for, by name.",
					"items": map[string]any{"$ref": ref("QuotaResource")}},
				"pendingUnits":  integer("Units waiting for the quota or one below it."),
				"admittedUnits": integer("Units holding the quota or one below it (Reserved, Dequeued, Running)."),
			}),
			"x-kubernetes-group-version-kind": gvk("Quota"),
		},
		defPrefix + "QuotaResource": map[string]any{
			"type":        "object",
			"description": "QuotaResource is one resource of a quota; amounts cover the quota and every quota below it.",
			"required":    []string{"name", "min", "used", "borrowed", "lent", "pending"},
			"properties": map[string]any{
				"name":     str("Name of the resource."),
				"min":      quantity("The guaranteed amount; 0 when the quota names none."),
				"max":      quantity("The limit; absent when the quota does not limit the resource."),
				"used":     quantity("What admitted units hold, with what pods koord-queue does not manage use."),
				"borrowed": quantity("The part of used above min."),
				"lent":     quantity("The part of min not used that other quotas may use; 0 when the quota does not lend."),
				"pending":  quantity("What the waiting units ask for in all."),
			},
		},
		defPrefix + "QuotaMetadata": map[string]any{
			"type":        "object",
			"description": "QuotaMetadata names a quota.",
			"properties":  map[string]any{"name": str("Name of the quota.")},
		},
		defPrefix + "QuotaList": map[string]any{
			"type":        "object",
			"description": "QuotaList is every quota of the scheduler's quota tree, by name.",
			"required":    []string{"items"},
			"properties": typeMeta(map[string]any{
				"metadata": listMeta,
				"items":    map[string]any{"type": "array", "description": "The quotas.", "items": map[string]any{"$ref": ref("Quota")}},
			}),
			"x-kubernetes-group-version-kind": gvk("QuotaList"),
		},
		defPrefix + "FeatureGates": map[string]any{
			"type":        "object",
			"description": "FeatureGates are the feature gates the serving koord-queue scheduler runs with.",
			"required":    []string{"gates"},
			"properties": typeMeta(map[string]any{
				"gates": map[string]any{"type": "object", "description": "Every gate the scheduler knows, and whether it is enabled.",
					"additionalProperties": map[string]any{"type": "boolean"}},
			}),
			"x-kubernetes-group-version-kind": gvk("FeatureGates"),
		},
	}
}
