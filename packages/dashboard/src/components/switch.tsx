interface SwitchProps {
  checked: boolean;
  onChange: (checked: boolean) => void;
  label: string;
  disabled?: boolean;
  /** Visible text beside the track; the accessible name is always `label`. */
  text?: string;
}

/** An on/off control announced as a switch (role="switch", aria-checked). */
export function Switch({ checked, onChange, label, disabled, text }: SwitchProps) {
  return (
    <button type="button" role="switch" aria-checked={checked} aria-label={label} className="switch" disabled={disabled} onClick={() => onChange(!checked)}>
      <span className="switch-track" aria-hidden="true">
        <span className="switch-thumb" />
      </span>
      {text ? <span className="switch-text">{text}</span> : null}
    </button>
  );
}
