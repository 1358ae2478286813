// An account with JetStream stores its streams under `<store_dir>/accounts/<name>`. nats-server 2.14 accepts any
// account name but `$G` and joins it into the path unchecked, so `../x` or `a/b` would put an account's
// streams outside its own directory (or inside another's); Flotilla refuses such a name at startup instead.

/** Why `name` cannot be a store directory's name, or undefined when it can. */
export function storeDirNameProblem(name: string): string | undefined {
  const unsafe = name === '' || name === '.' || name === '..' || /[/\\\0]/.test(name);
  if (!unsafe) return undefined;
  return (
    `account name ${JSON.stringify(name)} can not have JetStream in flotilla: the name is its store directory, ` +
    `so it must not be empty, "." or "..", nor contain "/", "\\\\" or NUL`
  );
}
