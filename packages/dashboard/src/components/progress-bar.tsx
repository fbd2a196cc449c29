interface ProgressBarProps {
  value: number;
  max: number;
  label: string;
  /** Visible text read out instead of the bare number, e.g. "42 MiB of 1 GiB". */
  valueText?: string;
  tone?: 'default' | 'success' | 'warning' | 'danger';
  indeterminate?: boolean;
}

export function ProgressBar({ value, max, label, valueText, tone = 'default', indeterminate }: ProgressBarProps) {
  const fraction = max > 0 ? Math.min(1, Math.max(0, value / max)) : 0;
  return (
    <div
      className={`progress progress-${tone}${indeterminate ? ' progress-indeterminate' : ''}`}
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={indeterminate ? undefined : Math.round(fraction * 100)}
      aria-valuetext={valueText}
    >
      <div className="progress-fill" style={{ width: indeterminate ? undefined : `${fraction * 100}%` }} />
    </div>
  );
}
