#!/bin/bash
# HyperPod lifecycle script for EKS-orchestrated instance groups (uploaded to S3 by
# mlcc/components/hyperpod.py and run once when a node is created).
#
# EKS nodes are configured by HyperPod itself (kubelet, containerd, the EKS join); this script
# only records what it ran on, so that a failed node creation can be diagnosed from the
# cluster's CloudWatch log group (/aws/sagemaker/Clusters/<cluster>/<id>), where HyperPod
# streams lifecycle-script output. Keep it idempotent and quick: a non-zero exit fails the node.
set -euo pipefail

log() {
  printf '[on_create] %s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*"
}

log "starting on $(hostname)"
if [[ -r /opt/ml/config/resource_config.json ]]; then
  log "resource config: $(tr -d '\n' < /opt/ml/config/resource_config.json)"
fi
# HyperPod mounts the instance group's extra EBS volume here (InstanceStorageConfigs).
if mountpoint -q /opt/sagemaker; then
  log "secondary volume: $(df -h --output=size,avail /opt/sagemaker | tail -n 1)"
fi
if command -v nvidia-smi > /dev/null 2>&1; then
  log "GPUs: $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
fi
log "done"
