{{/* Names, labels, images and the extension list shared by the templates. */}}

{{- define "koord-queue.labels" -}}
app.kubernetes.io/part-of: koord-queue
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The values of the job extensions binary; its key has a dash, so index it once here. */}}
{{- define "koord-queue.ctrl" -}}
{{- toYaml (index .Values.extension "koord-queue-controllers") -}}
{{- end -}}

{{/* image joins global.imagePrefix, a repository and a tag (the appVersion when empty). */}}
{{- define "koord-queue.image" -}}
{{- $root := index . 0 -}}
{{- $repo := index . 1 -}}
{{- $tag := index . 2 | default $root.Chart.AppVersion -}}
{{- $prefix := trimSuffix "/" ($root.Values.global.imagePrefix | default "") -}}
{{- if $prefix -}}
{{- printf "%s/%s:%s" $prefix $repo $tag -}}
{{- else -}}
{{- printf "%s:%s" $repo $tag -}}
{{- end -}}
{{- end -}}

{{/*
extensions lists the --enabled-extensions names from extension.<kind>.enable, in a
fixed order; empty when none is enabled (then koord-queue-controllers is not
deployed).
*/}}
{{- define "koord-queue.extensions" -}}
{{- $e := .Values.extension -}}
{{- $names := list -}}
{{- if $e.batchjob.enable }}{{ $names = append $names "job" }}{{ end -}}
{{- if $e.pod.enable }}{{ $names = append $names "pod" }}{{ end -}}
{{- if $e.tf.enable }}{{ $names = append $names "tfjob" }}{{ end -}}
{{- if $e.pytorch.enable }}{{ $names = append $names "pytorchjob" }}{{ end -}}
{{- if $e.argo.enable }}{{ $names = append $names "workflow" }}{{ end -}}
{{- if $e.spark.enable }}{{ $names = append $names "sparkapp" }}{{ end -}}
{{- if $e.ray.enable }}{{ $names = concat $names (list "rayjob" "rayjobv1alpha1") }}{{ end -}}
{{- if $e.raycluster.enable }}{{ $names = append $names "raycluster" }}{{ end -}}
{{- if $e.mpi.enable }}{{ $names = append $names "mpijob" }}{{ end -}}
{{- if $e.jobset.enable }}{{ $names = append $names "jobset" }}{{ end -}}
{{- if $e.leaderworkerset.enable }}{{ $names = append $names "leaderworkerset" }}{{ end -}}
{{- if $e.trainjob.enable }}{{ $names = append $names "trainjob" }}{{ end -}}
{{- join "," $names -}}
{{- end -}}

{{/*
placement renders a pod spec's priorityClassName and topology spread
constraints from a component's values (list root values name replicas). With no
constraints given and more than one replica, the pods spread softly over nodes.
*/}}
{{- define "koord-queue.placement" -}}
{{- $root := index . 0 -}}
{{- $v := index . 1 -}}
{{- $name := index . 2 -}}
{{- $replicas := index . 3 -}}
{{- with $v.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- if $v.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml $v.topologySpreadConstraints | nindent 2 }}
{{- else if gt (int $replicas) 1 }}
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        app.kubernetes.io/name: {{ $name }}
        app.kubernetes.io/instance: {{ $root.Release.Name }}
{{- end }}
{{- end -}}

{{/*
The pod and container security settings both Deployments share. The ids come
from securityContext.*; a null id is left out for the cluster to assign.
*/}}
{{- define "koord-queue.podSecurityContext" -}}
{{- $s := .Values.securityContext | default dict -}}
runAsNonRoot: true
{{- range $key := list "runAsUser" "runAsGroup" "fsGroup" }}
{{- $id := index $s $key }}
{{- if not (kindIs "invalid" $id) }}
{{ $key }}: {{ int64 $id }}
{{- end }}
{{- end }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "koord-queue.containerSecurityContext" -}}
runAsNonRoot: true
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
privileged: false
capabilities:
  drop:
    - ALL
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/*
Rules a binary with secure metrics (metrics.secure) needs to authenticate and
authorize its /metrics callers: a TokenReview of the bearer token, then a
SubjectAccessReview of get on the path.
*/}}
{{- define "koord-queue.metricsAuthRules" -}}
{{- if .Values.metrics.secure }}
  - apiGroups: ["authentication.k8s.io"]
    resources: ["tokenreviews"]
    verbs: ["create"]
  - apiGroups: ["authorization.k8s.io"]
    resources: ["subjectaccessreviews"]
    verbs: ["create"]
{{- end }}
{{- end }}

{{/*
How a ServiceMonitor or PodMonitor endpoint scrapes: with secure metrics (the
argument), HTTPS without verifying the self-signed certificate, and the token
of ServiceAccount koord-queue-metrics-scraper; otherwise plain HTTP.
*/}}
{{- define "koord-queue.scrapeAuth" -}}
{{- if . -}}
scheme: https
tlsConfig:
  insecureSkipVerify: true
authorization:
  type: Bearer
  credentials:
    name: koord-queue-metrics-scraper-token
    key: token
{{- else -}}
scheme: http
{{- end -}}
{{- end }}

{{/*
The admission-check writers of queueUnitStatusPolicy.admissionCheckWriters,
checked and returned as JSON: {"serviceAccounts": [{"namespace", "name"}],
"groups": [...]}. Bad entries fail the render with the value's name.
*/}}
{{- define "koord-queue.checkWriters" -}}
{{- $key := "queueUnitStatusPolicy.admissionCheckWriters" -}}
{{- $w := .Values.queueUnitStatusPolicy.admissionCheckWriters | default dict -}}
{{- $sas := $w.serviceAccounts | default list -}}
{{- $groups := $w.groups | default list -}}
{{- if not (kindIs "slice" $sas) -}}
{{- fail (printf "%s.serviceAccounts must be a list of <namespace>/<name>, got %v" $key $sas) -}}
{{- end -}}
{{- if not (kindIs "slice" $groups) -}}
{{- fail (printf "%s.groups must be a list of group names, got %v" $key $groups) -}}
{{- end -}}
{{- $out := list -}}
{{- range $sas -}}
{{- if not (and (kindIs "string" .) (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?/[a-z0-9]([-.a-z0-9]*[a-z0-9])?$" .)) -}}
{{- fail (printf "%s.serviceAccounts: %q is not <namespace>/<name> of a ServiceAccount" $key (toString .)) -}}
{{- end -}}
{{- $parts := splitList "/" . -}}
{{- $out = append $out (dict "namespace" (index $parts 0) "name" (index $parts 1)) -}}
{{- end -}}
{{- range $groups -}}
{{- if not (and (kindIs "string" .) (regexMatch "^[^'\\\\]+$" .)) -}}
{{- fail (printf "%s.groups: %q is not a group name (empty, or holds a quote or backslash)" $key (toString .)) -}}
{{- end -}}
{{- if eq . "system:authenticated" "system:unauthenticated" "system:serviceaccounts" -}}
{{- fail (printf "%s.groups: %q would let everyone of it write admission checks; list the check controller's ServiceAccount instead" $key .) -}}
{{- end -}}
{{- end -}}
{{- toJson (dict "serviceAccounts" $out "groups" $groups) -}}
{{- end }}

{{/*
Whether the API server serves ValidatingAdmissionPolicy (GA in Kubernetes
1.30); `helm template` needs --api-versions to say so.
*/}}
{{- define "koord-queue.policiesServed" -}}
{{- if .Capabilities.APIVersions.Has "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy" -}}true{{- end -}}
{{- end }}

{{/*
The replicas of Deployment koord-queue: controller.replicas, or when it is
empty 2 with the visibility server (kube-apiserver's discovery of an
aggregated API that does not answer stalls namespace deletion cluster-wide, so
one pod going away must not take the API with it) and 1 without.
*/}}
{{- define "koord-queue.schedulerReplicas" -}}
{{- $c := .Values.controller -}}
{{- if not (kindIs "invalid" $c.replicas) -}}
{{- int $c.replicas -}}
{{- else if $c.enableVisibilityServer -}}
2
{{- else -}}
1
{{- end -}}
{{- end }}
