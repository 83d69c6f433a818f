/** A small valid repository as path → YAML text, which tests break one file at a time. */
export function validRepository(): Record<string, string> {
  const files: Record<string, string> = {
    'projects/shop/project.yaml': 'name: Shop\nslug: shop\n',
  };
  for (const key of ['checkout-v2', 'search']) {
    files[`projects/shop/flags/${key}.yaml`] = `key: ${key}\nkind: boolean\n`;
    for (const env of ['dev', 'staging', 'prod']) {
      files[`projects/shop/environments/${env}/${key}.yaml`] = 'enabled: true\nrolloutPct: 100\nvalueOn: true\nvalueOff: false\n';
    }
  }
  return files;
}

export function entries(files: Record<string, string>): Array<{ path: string; text: string }> {
  return Object.entries(files).map(([path, text]) => ({ path, text }));
}
