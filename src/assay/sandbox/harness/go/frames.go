package main

// Length-prefixed JSON frames over descriptors 3 (in) and 4 (out); see ../frames.py.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
)

const assayMaxFrame = 64 * 1024 * 1024

var (
	assayFramesIn  = os.NewFile(3, "frames-in")
	assayFramesOut = os.NewFile(4, "frames-out")
)

// assayReadFrame returns nil, false at the end of input.
func assayReadFrame() (interface{}, bool, error) {
	return assayReadFrameFrom(assayFramesIn, assayMaxFrame)
}

func assayWriteFrame(message interface{}) error {
	return assayWriteFrameTo(assayFramesOut, message)
}

// assayReadFrameFrom reads one frame of at most limit bytes from file.
func assayReadFrameFrom(file *os.File, limit uint32) (interface{}, bool, error) {
	header := make([]byte, 4)
	if _, err := io.ReadFull(file, header); err != nil {
		if err == io.EOF {
			return nil, false, nil
		}
		return nil, false, err
	}
	size := binary.BigEndian.Uint32(header)
	if size > limit {
		return nil, false, errors.New("incoming frame too large")
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(file, body); err != nil {
		return nil, false, err
	}
	decoder := json.NewDecoder(bytes.NewReader(body))
	decoder.UseNumber() // integers keep their exact digits
	var value interface{}
	if err := decoder.Decode(&value); err != nil {
		return nil, false, err
	}
	if rest := bytes.TrimSpace(body[decoder.InputOffset():]); len(rest) > 0 {
		return nil, false, errors.New("trailing data after the frame's JSON value")
	}
	return value, true, nil
}

func assayWriteFrameTo(file *os.File, message interface{}) error {
	var body bytes.Buffer
	encoder := json.NewEncoder(&body)
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(message); err != nil {
		return err
	}
	data := bytes.TrimRight(body.Bytes(), "\n")
	frame := make([]byte, 4+len(data))
	binary.BigEndian.PutUint32(frame, uint32(len(data)))
	copy(frame[4:], data)
	_, err := file.Write(frame)
	return err
}
