#!/usr/bin/env bash
# Copyright 2026 The Koordinator Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# Plays the user guide's quick start (test/testdata/guide/elastic-quota.yaml and
# jobs.yaml, applied as written) on the local cluster `make run` started, with
# the kubectl built by hack/tools.sh, showing each command as a user would type it.
#
#   KUBECONFIG=... KUBECTL=... STATE_DIR=... POD_RUN_TIME=30s hack/cluster-quickstart.sh
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
guide=$root/test/testdata/guide
: "${KUBECONFIG:?KUBECONFIG must point at the local cluster}"
: "${KUBECTL:?KUBECTL must be the kubectl built by hack/tools.sh}"
: "${STATE_DIR:?STATE_DIR must be the cluster state directory}"
run_time=${POD_RUN_TIME:-30s}
export KUBECONFIG KUBECTL
# The kubectl plugin kubectl-koord_queue is built beside the binaries.
export PATH="$STATE_DIR/bin:$PATH"

if [[ ! -x "$KUBECTL" ]]; then
	echo "quickstart: kubectl not found at $KUBECTL: build it with 'hack/tools.sh kubectl'" >&2
	exit 1
fi

bold() { printf '\n\033[1m# %s\033[0m\n' "$*"; }
show() {
	printf '$ kubectl %s\n' "$*"
	"$KUBECTL" "$@"
}
# The QueueUnit columns of the guide, plus the reason a unit waits.
units() {
	show get queueunit -n default \
		-o custom-columns='NAME:.metadata.name,PHASE:.status.phase,PRIORITY:.spec.priority,JOBTYPE:.spec.consumerRef.kind,MESSAGE:.status.message'
}
until_ok() { # until_ok SECONDS WHAT CMD...: poll CMD quietly
	local limit=$1 what=$2
	shift 2
	for ((i = 0; i < limit * 2; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	echo "quickstart: timed out after ${limit}s waiting for $what" >&2
	return 1
}

print_usage() {
	cat <<EOM

The cluster keeps running. To use it:

  export KUBECONFIG=$KUBECONFIG
  alias kubectl=$KUBECTL      # the kubectl built for this Kubernetes version
  kubectl get queues -n koord-queue
  kubectl get queueunits -A
  export PATH=$STATE_DIR/bin:\$PATH   # the kubectl plugin:
  kubectl koord-queue list -A
  kubectl koord-queue why job/NAME -n NAMESPACE

The web view of quotas and queues, through kube-apiserver with your credentials:
  kubectl proxy --port 8001 &
  then open http://127.0.0.1:8001/apis/visibility.koord-queue.x-k8s.io/v1alpha1/ui/

Logs of every process: $STATE_DIR/logs/<name>.log
Stop everything:       make down
EOM
}

if ! grep -q '"koord-queue-controllers"' "$STATE_DIR/state.json" 2>/dev/null; then
	echo
	echo "quickstart: koord-queue is not running on this cluster (cmd/koord-queue or cmd/koord-queue-controllers"
	echo "does not build yet), so the guide's quick start is skipped."
	print_usage
	exit 0
fi

koordinator=false
if grep -q '"koord-scheduler"' "$STATE_DIR/state.json" 2>/dev/null; then
	koordinator=true
	bold "Koordinator runs too: koord-manager (quota webhooks) and koord-scheduler (the scheduler)"
	show get elasticquota -n koordinator-system
fi

start=$SECONDS
bold "Create the ElasticQuota team-a (max and min: 4 CPU, 8Gi)"
show apply -f "$guide/elastic-quota.yaml"
until_ok 60 "Queue koord-queue/team-a" "$KUBECTL" get queue team-a -n koord-queue
bold "koord-queue created a Queue of the same name in namespace koord-queue"
show get queue team-a -n koord-queue

bold "Submit both suspended Jobs of jobs.yaml at once"
show apply -f "$guide/jobs.yaml"

bold "Wait for my-job's pod to be Running (the guide's command)"
until_ok 120 "a pod of my-job" bash -c '[[ -n "$("$KUBECTL" get pod -l job-name=my-job -n default -o name)" ]]'
show wait --for=condition=Ready pod -l job-name=my-job -n default --timeout=120s
until_ok 60 "QueueUnit my-job-blocked to report why it waits" bash -c \
	'[[ -n "$("$KUBECTL" get queueunit my-job-blocked -n default -o jsonpath={.status.message})" ]]'

bold "my-job is admitted; my-job-blocked stays Enqueued: team-a is at its max"
show get queueunit my-job-blocked -n default
units

if $koordinator; then
	bold "koord-scheduler charged my-job's pod to team-a: its status.used shows the job's 4 CPU"
	show get pod -l job-name=my-job -n default -L quota.scheduling.koordinator.sh/name
	until_ok 30 "team-a's status.used to show 4 CPU" bash -c \
		'[[ "$("$KUBECTL" get elasticquota team-a -n default -o jsonpath={.status.used.cpu})" == 4 ]]'
	show get elasticquota team-a -n default -o jsonpath='{.status.used}{"\n"}'
fi

bold "Ask why it waits: the kubectl plugin, and the visibility API's columns"
show koord-queue why job/my-job-blocked -n default
show get queues.visibility.koord-queue.x-k8s.io team-a

bold "Wait for my-job to complete (its pod runs $run_time on a fake node)"
show wait --for=condition=Complete job/my-job -n default --timeout=300s

bold "my-job released team-a's quota: my-job-blocked is dequeued automatically"
show wait --for=jsonpath='{.spec.suspend}'=false job/my-job-blocked -n default --timeout=120s
until_ok 120 "a pod of my-job-blocked" bash -c '[[ -n "$("$KUBECTL" get pod -l job-name=my-job-blocked -n default -o name)" ]]'
show wait --for=condition=Ready pod -l job-name=my-job-blocked -n default --timeout=120s
units
show get pods -n default -o wide

echo
echo "quickstart: done in $((SECONDS - start))s"
print_usage
