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
