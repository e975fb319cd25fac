#!/usr/bin/env bash
# Writes the bash completion of PROGRAM (installed as NAME) to OUTPUT, from PROGRAM --help alone,
# so that a new flag is completed without anyone editing a list (cmake/from_help.cmake runs it at
# build time): gen_completion.sh PROGRAM NAME OUTPUT
#
# A flag's value completes by what the help says of it (CLI11's format): its {choices}; files for
# a :FILE/:PATH check or a name with "file" or "conf"; directories for a :DIR check, a name with
# "dir", or "directory" in its description; nothing else for other values. A flag written
# --flag{default} takes its value only as --flag=VALUE. A positional argument in the Usage line
# (paddle-launch's training program) completes commands and files, and the words after it by that
# program's completion where bash-completion is loaded, else files. The completion needs bash
# alone, not the bash-completion package's helpers.
set -euo pipefail
program=$1 name=$2 output=$3
help=$("$program" --help)

# One "FLAG<TAB>required|optional|none<TAB>VALUE" line per flag name, VALUE being words W..., file,
# dir or any.
flags=$(awk '
  function emit(   n, i, how, value, all, lower) {
    if (names == "") return
    how = "none"
    if (optional || type != "") how = optional ? "optional" : "required"
    lower = tolower(names)
    value = "any"
    if (match(type, /\{[^}]*\}/)) {
      value = "words " substr(type, RSTART + 1, RLENGTH - 2); gsub(/,/, " ", value)
    } else if (type ~ /:(FILE|PATH)/) value = "file"
    else if (type ~ /:DIR/) value = "dir"
    else if (type ~ /^(INT|UINT|FLOAT|NUMBER)/) value = "any"
    else if (lower ~ /file|conf/) value = "file"
    else if (lower ~ /dir/ || description ~ /[Dd]irector(y|ies)/) value = "dir"
    n = split(names, all, ",")
    for (i = 1; i <= n; i++) printf "%s\t%s\t%s\n", all[i], how, how == "none" ? "" : value
    names = ""
  }
  # An option line: "  NAMES[{default}][ TYPE]  description"; a description may continue below.
  /^  -/ {
    emit()
    line = substr($0, 3)
    match(line, /^[^ ]+/)
    names = substr(line, 1, RLENGTH); rest = substr(line, RLENGTH + 1)
    optional = names ~ /\{/
    gsub(/\{[^}]*\}/, "", names)
    type = ""
    if (rest ~ /^ ([A-Z]|:\{)/) { match(rest, /^ [^ ]+/); type = substr(rest, 2, RLENGTH - 1); rest = substr(rest, RLENGTH + 1) }
    description = rest
    next
  }
  /^   +[^ -]/ && names != "" { description = description " " $0; next }
  { emit() }
  END { emit() }
' <<<"$help")
[ -n "$flags" ] || { echo "gen_completion.sh: no flags found in \`$program --help\`" >&2; exit 1; }
# A positional argument: a word after the options in the first Usage line.
positional=0
usage=$(grep -m1 '^Usage: ' <<<"$help" || true)
[[ $usage =~ ^Usage:\ [^\ ]+(\ \[[^]]*\])*\ [^[\ ] ]] && positional=1

function=_$(tr -c 'A-Za-z0-9_\n' _ <<<"$name")_completion
{
  echo "# Bash completion of $name, generated from \`$name --help\` by scripts/gen_completion.sh."
  echo "${function}_value() {  # how the value of flag \$1 completes: required|optional|none, then its kind"
  echo '  case "$1" in'
  # One arm per kind, its flags in the order of the help.
  awk -F'\t' '{ kind = $2 ($3 == "" ? "" : " " $3) }
               !(kind in arm) { order[++n] = kind; arm[kind] = $1; next } { arm[kind] = arm[kind] "|" $1 }
               END { for (i = 1; i <= n; i++) printf "    %s) echo \"%s\" ;;\n", arm[order[i]], order[i] }' <<<"$flags"
  echo '    *) echo none ;;'
  echo '  esac'
  echo '}'
  cat <<EOF
$function() {
  local flags="$(cut -f1 <<<"$flags" | tr '\n' ' ' | sed 's/ $//')" positional=$positional
EOF
  cat <<'EOF'
  local -a words=() starts=()
  local i w joined=0 state=flags flag= how kind
  COMPREPLY=()
  # COMP_WORDBREAKS splits --flag=value at '='; join the pieces back into one word.
  for ((i = 1; i <= COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if ((${#words[@]})) && [[ $w == = || $joined == 1 ]]; then
      words[-1]+=$w
      joined=0; [[ $w == = ]] && joined=1
    else
      words+=("$w") starts+=("$i")
    fi
  done
  ((${#words[@]})) || words=("")
  local cur=${words[-1]} raw=${COMP_WORDS[COMP_CWORD]}
  [[ $raw == = ]] && raw=
  for ((i = 0; i < ${#words[@]} - 1; i++)); do
    w=${words[i]}
    if [[ $state == value ]]; then
      state=flags
    elif [[ $w == -* ]]; then
      [[ $w != *=* && $("${FUNCNAME[0]}_value" "$w") == required* ]] && state=value flag=$w
    elif ((positional)); then
      state=arguments
      break
    fi
  done
  local value=$cur
  if [[ $state == flags && $cur == -*=* ]]; then
    flag=${cur%%=*} value=${cur#*=} state=value
  fi
  case $state in
    value)
      read -r how kind <<<"$("${FUNCNAME[0]}_value" "$flag")"
      case $kind in
        words*) mapfile -t COMPREPLY < <(compgen -W "${kind#words}" -- "$value") ;;
        file) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- "$value") ;;
        dir) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- "$value") ;;
      esac
      # Bash replaces only the part of the word it split off (after '=' when it splits there).
      local strip=$((${#cur} - ${#raw}))
      for i in "${!COMPREPLY[@]}"; do
        w=${cur:0:${#cur}-${#value}}${COMPREPLY[i]}
        COMPREPLY[i]=${w:strip}
      done ;;
    arguments)
      # The program's own completion where bash-completion can find it (train's is installed
      # beside this one), else files.
      if declare -F _command_offset >/dev/null; then
        _command_offset "${starts[i]}"
      else
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      fi ;;
    flags)
      if [[ $cur == -* ]] || ((!positional)); then
        mapfile -t COMPREPLY < <(compgen -W "$flags" -- "$cur")
      else
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -c -- "$cur"; compgen -f -- "$cur")
      fi ;;
  esac
}
EOF
  echo "complete -F $function $name"
} >"$output.tmp"
bash -n "$output.tmp"
mv "$output.tmp" "$output"
