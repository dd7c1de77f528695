{{- define "tether.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "tether.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{/* The names the service answers to inside the cluster, and any a proxy adds. */}}
{{- define "tether.allowedHosts" -}}
{{- $name := include "tether.fullname" . -}}
{{- $ns := .Release.Namespace -}}
{{- $hosts := list $name (printf "%s.%s" $name $ns) (printf "%s.%s.svc" $name $ns) (printf "%s.%s.svc.cluster.local" $name $ns) -}}
{{- concat $hosts .Values.allowedHosts | uniq | join "," -}}
{{- end -}}

{{/* Several replicas share one store, one token and one secret key, or they are not replicas of one Tether. */}}
{{- define "tether.checkReplicas" -}}
{{- if gt (int .Values.replicaCount) 1 -}}
{{- if not .Values.store.postgres.host -}}
{{- fail "replicaCount > 1 needs a shared PostgreSQL store: set store.postgres.host (and store.postgres.existingSecret)" -}}
{{- end -}}
{{- if not .Values.auth.existingSecret -}}
{{- fail "replicaCount > 1 needs the bearer token from a Secret shared by every replica: set auth.existingSecret" -}}
{{- end -}}
{{- if not .Values.store.secretKey.existingSecret -}}
{{- fail "replicaCount > 1 needs the store's secret key from a Secret shared by every replica: set store.secretKey.existingSecret" -}}
{{- end -}}
{{- end -}}
{{- if and .Values.store.postgres.host (not .Values.store.postgres.existingSecret) -}}
{{- fail "store.postgres.host needs store.postgres.existingSecret: the Secret with the database user's password" -}}
{{- end -}}
{{- end -}}

{{/* One replica keeps its data dir on a volume of its own; several each get an empty dir. */}}
{{- define "tether.persistent" -}}
{{- if and .Values.persistence.enabled (le (int .Values.replicaCount) 1) -}}true{{- end -}}
{{- end -}}
