import { useEffect, useState } from 'react';
import { copyText } from '../lib/clipboard';
import { useToast } from '../hooks/toast';
import { Icon } from './icons';

interface CopyButtonProps {
  text: string;
  /** Accessible name, e.g. "Copy URL of report.pdf". */
  label: string;
  /** Visible text; omit for an icon-only button. */
  children?: string;
  className?: string;
}

export function CopyButton({ text, label, children, className = 'btn btn-secondary' }: CopyButtonProps) {
  const [copied, setCopied] = useState(false);
  const { notify } = useToast();

  useEffect(() => {
    if (!copied) return;
    const timer = window.setTimeout(() => setCopied(false), 2000);
    return () => window.clearTimeout(timer);
  }, [copied]);

  const copy = async () => {
    try {
      await copyText(text);
      setCopied(true);
      notify('Copied to the clipboard');
    } catch {
      notify('Could not copy. Select the text and copy it by hand.', 'error');
    }
  };

  return (
    <button type="button" className={`${className}${children ? '' : ' btn-icon'}`} aria-label={label} title={label} onClick={() => void copy()}>
      <Icon name={copied ? 'check' : 'copy'} />
      {children ? <span>{copied ? 'Copied' : children}</span> : null}
    </button>
  );
}
