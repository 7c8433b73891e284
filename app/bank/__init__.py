"""The question bank: YAML files in question_bank/, their schema, checks, load and export."""
