import { type Child, h } from '../dom.js';

export interface ConfirmOptions {
  title: string;
  body: Child;
  confirmLabel: string;
  danger?: boolean;
  /** An optional one-line text to ask for (a kill's reason). */
  input?: { label: string; placeholder?: string };
}

/**
 * A modal question in a <dialog>: Escape or Cancel says no. Used before every action that changes what
 * users get (kill, clear kill, promote, archive), so a slip of the mouse changes nothing.
 */
export function confirmDialog(options: ConfirmOptions): Promise<{ confirmed: boolean; text: string }> {
  return new Promise((resolve) => {
    const field = options.input
      ? h('input', { type: 'text', class: 'dialog-input', placeholder: options.input.placeholder ?? '', maxlength: 4096 })
      : null;
    const dialog = h(
      'dialog',
      { class: 'confirm', 'aria-label': options.title },
      h('h2', null, options.title),
      h('div', { class: 'dialog-body' }, options.body),
      field && h('label', { class: 'dialog-label' }, options.input!.label, field),
      h(
        'div',
        { class: 'dialog-actions' },
        h('button', { type: 'button', class: 'secondary', onclick: () => dialog.close('cancel') }, 'Cancel'),
        h(
          'button',
          { type: 'button', class: options.danger ? 'danger' : 'primary', 'data-confirm': true, onclick: () => dialog.close('ok') },
          options.confirmLabel,
        ),
      ),
    );
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve({ confirmed: dialog.returnValue === 'ok', text: field?.value.trim() ?? '' });
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    (field ?? dialog.querySelector<HTMLButtonElement>('button.secondary'))?.focus();
  });
}
