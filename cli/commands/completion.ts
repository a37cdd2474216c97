// `vnfm completion bash|zsh`: a completion script generated from the command tree itself, so it
// always offers exactly the commands and options this CLI has.
import { Argument, type Command, type Option } from 'commander';
import { print } from '../context.ts';

interface Node {
  /** "vnfm", "vnfm package", "vnfm package upload", ... */
  path: string;
  /** Subcommand names and option flags offered after this command. */
  words: string[];
  /** Option flag -> the values it takes (commander choices). */
  values: Map<string, string[]>;
}

function flagsOf(options: readonly Option[]): string[] {
  return options.flatMap((option) => [option.long, option.short].filter((flag): flag is string => Boolean(flag)));
}

/** Every command of the tree with what may follow it; global options are offered everywhere. */
export function completionTree(root: Command): Node[] {
  // --version belongs to the root alone; --endpoint and --profile work after any command.
  const globals = flagsOf(root.options.filter((option) => option.long !== '--version'));
  const nodes: Node[] = [];
  const visit = (command: Command, path: string) => {
    const values = new Map<string, string[]>();
    for (const option of command.options) {
      if (!option.argChoices) continue;
      for (const flag of [option.long, option.short]) if (flag) values.set(flag, option.argChoices);
    }
    const subcommands = command.commands.map((sub) => sub.name());
    const own = command === root ? ['--version'] : flagsOf(command.options);
    nodes.push({ path, words: [...new Set([...subcommands, ...own, ...globals, '--help'])], values });
    for (const sub of command.commands) visit(sub, `${path} ${sub.name()}`);
  };
  visit(root, root.name());
  return nodes;
}

const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

export function bashCompletion(root: Command): string {
  const nodes = completionTree(root);
  const name = root.name();
  const tree = nodes.map((node) => `  [${quote(node.path)}]=${quote(node.words.join(' '))}`).join('\n');
  const values = nodes.flatMap((node) => [...node.values].map(([flag, choices]) => `  [${quote(`${node.path} ${flag}`)}]=${quote(choices.join(' '))}`));
  return `# bash completion for ${name}: source it, or put it in /etc/bash_completion.d/${name}
declare -gA _${name}_tree=(
${tree}
)
declare -gA _${name}_values=(
${values.join('\n')}
)
_${name}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" node=${name} word i
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    [[ $word == -* ]] && continue
    [[ -n "\${_${name}_tree[$node $word]+set}" ]] && node="$node $word"
  done
  if [[ -n "\${_${name}_values[$node $prev]+set}" ]]; then
    COMPREPLY=($(compgen -W "\${_${name}_values[$node $prev]}" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -W "\${_${name}_tree[$node]}" -- "$cur"))
}
complete -o default -F _${name} ${name}
`;
}

export function zshCompletion(root: Command): string {
  const nodes = completionTree(root);
  const name = root.name();
  const tree = nodes.map((node) => `  ${quote(node.path)} ${quote(node.words.join(' '))}`).join('\n');
  const values = nodes.flatMap((node) => [...node.values].map(([flag, choices]) => `  ${quote(`${node.path} ${flag}`)} ${quote(choices.join(' '))}`));
  // "path" is zsh's array tied to PATH: the walk keeps its place in "node".
  return `#compdef ${name}
# zsh completion for ${name}: put it in a directory of $fpath as _${name}, or source it after compinit
typeset -gA _${name}_tree _${name}_values
_${name}_tree=(
${tree}
)
_${name}_values=(
${values.join('\n')}
)
_${name}() {
  local node=${name} word i
  for ((i = 2; i < CURRENT; i++)); do
    word=\${words[i]}
    [[ $word == -* ]] && continue
    (( \${+_${name}_tree[$node $word]} )) && node="$node $word"
  done
  if (( \${+_${name}_values[$node \${words[CURRENT-1]}]} )); then
    compadd -- \${=_${name}_values[$node \${words[CURRENT-1]}]}
    return
  fi
  compadd -- \${=_${name}_tree[$node]}
}
compdef _${name} ${name}
`;
}

export function completionCommand(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script: eval "$(vnfm completion bash)"')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh']))
    .action((shell: 'bash' | 'zsh') => {
      print(shell === 'bash' ? bashCompletion(program) : zshCompletion(program));
    });
}
